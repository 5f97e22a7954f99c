/**
 * Response compression, on by default like the reference node's (`api.compression_enabled`):
 * a body at or above the threshold is sent br, gzip or deflate when the client's
 * Accept-Encoding asks for it (the official SDKs send `gzip, deflate, br`).
 *
 * Every handler sends through `sendBody`. Bodies that are sent again and again (cached pages, the
 * spec, the explorer's assets) are `EncodedBody`s, which make each encoding once; a body made per
 * request is compressed per request, and only when it reaches the threshold. This replaces
 * `@fastify/compress`, which compresses every time and whose onSend hook cost a bare GET 1.2 µs of
 * its 10 µs (bench/out probe, same run), on every request whether or not the client asked.
 */
import { negotiate } from "@fastify/accept-negotiator";
import type { FastifyReply, FastifyRequest } from "fastify";
import { brotliCompressSync, constants, deflateSync, gzipSync } from "node:zlib";
import type { ApiConfig } from "./config.js";

export type Encoding = "br" | "gzip" | "deflate";
/** In order of preference when the client weighs several alike. */
const SUPPORTED = ["br", "gzip", "deflate", "identity"];
/** Brotli's default quality (11) costs far more CPU than it saves bytes; 4 is the common choice. */
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };

/** Answers per Accept-Encoding value: clients send a handful of distinct ones, each many times. */
const picked = new Map<string, Encoding | null>();
const PICKED_MAX = 256;

/** The encoding to send for this Accept-Encoding, or null for identity. */
export function pickEncoding(acceptEncoding: string | string[] | undefined): Encoding | null {
  if (typeof acceptEncoding !== "string" || acceptEncoding === "") return null;
  let e = picked.get(acceptEncoding);
  if (e === undefined) {
    // `*` and the `x-gzip` alias mean gzip (RFC 9110 §12.5.3 and §8.4.1.3).
    const n = negotiate(acceptEncoding.toLowerCase().replace(/\*|x-gzip/gu, "gzip"), SUPPORTED);
    e = n === "br" || n === "gzip" || n === "deflate" ? n : null;
    if (picked.size >= PICKED_MAX) picked.clear();
    picked.set(acceptEncoding, e);
  }
  return e;
}

function encode(e: Encoding, bytes: Buffer): Buffer {
  return e === "br" ? brotliCompressSync(bytes, BROTLI) : e === "gzip" ? gzipSync(bytes) : deflateSync(bytes);
}

/** A body sent many times, and the encodings of it made so far (each made once, when first asked for). */
export class EncodedBody {
  private readonly encoded: Partial<Record<Encoding, Buffer>> = {};
  private extra = 0;
  /** Called after a new encoding was made (the page cache counts the bytes again). */
  onGrow: (() => void) | null = null;

  constructor(readonly identity: Buffer) {}

  /** Bytes held, every encoding included. */
  get size(): number {
    return this.identity.length + this.extra;
  }

  encode(e: Encoding): Buffer {
    let b = this.encoded[e];
    if (!b) {
      b = encode(e, this.identity);
      this.encoded[e] = b;
      this.extra += b.length;
      this.onGrow?.();
    }
    return b;
  }
}

/**
 * Sends `body` as `type`: encoded when compression is on, the body has at least the threshold's
 * bytes and the client accepts an encoding. A body that could be encoded says so in `Vary`.
 */
export function sendBody(
  config: ApiConfig,
  req: FastifyRequest,
  reply: FastifyReply,
  body: string | Buffer | EncodedBody,
  type: string,
): FastifyReply {
  reply.type(type);
  const identity = body instanceof EncodedBody ? body.identity : body;
  if (!config.compression || byteLengthBelow(identity, config.compressionThreshold)) return reply.send(identity);
  const vary = reply.getHeader("vary");
  reply.header("vary", vary ? `${String(vary)}, Accept-Encoding` : "Accept-Encoding");
  const e = pickEncoding(req.headers["accept-encoding"]);
  if (!e) return reply.send(identity);
  const bytes = body instanceof EncodedBody ? body.encode(e) : encode(e, typeof identity === "string" ? Buffer.from(identity) : identity);
  return reply.header("content-encoding", e).send(bytes);
}

/** Whether the body has fewer than `n` bytes (a string is measured only when it could be near). */
function byteLengthBelow(body: string | Buffer, n: number): boolean {
  if (typeof body !== "string") return body.length < n;
  if (body.length >= n) return false; // at least one byte per UTF-16 unit
  return body.length * 3 < n || Buffer.byteLength(body) < n;
}
