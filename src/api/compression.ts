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
import { brotliCompress, brotliCompressSync, constants, deflateSync, gzipSync } from "node:zlib";
import type { ApiConfig } from "./config.js";

export type Encoding = "br" | "gzip" | "deflate";
/** In order of preference when the client weighs several alike. */
const SUPPORTED = ["br", "gzip", "deflate", "identity"];
/**
 * Brotli per request at quality 4, the common choice: its default, 11, costs about 100× the CPU
 * (modules page of 25, 150 KB: 1.8 ms at 4, 179 ms at 11) for about 17% fewer bytes (31.7 → 26.3 KB).
 * A body sent again and again is worth that once: see `EncodedBody`.
 */
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };
const BROTLI_BEST = (bytes: number) => ({
  params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: bytes },
});
/** Sends of one body's brotli encoding after which it is re-encoded at the best quality. */
export const BROTLI_BEST_AFTER = 16;

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

/**
 * Best-quality encodings are made one at a time per process, and after one that took t ms the
 * next starts no sooner than 4t ms after it ended: at most a fifth of one core goes to them, even
 * when many pages turn hot at once.
 */
let refining = false;
let nextRefineAt = 0;

/**
 * A body sent many times, and the encodings of it made so far (each made once, when first asked
 * for). Brotli is made at quality 4 first; once it has been sent `BROTLI_BEST_AFTER` times it is
 * made again at the best quality on the thread pool, off the event loop, and sent that way from
 * then on: fewer bytes for every later client (the decoded body is the same).
 */
export class EncodedBody {
  private readonly encoded: Partial<Record<Encoding, Buffer>> = {};
  private extra = 0;
  /** br sends so far; -1 once the best-quality encoding has been asked for. */
  private brSends = 0;
  /** Called after the bytes held changed: a new encoding, or a smaller one (the page cache counts them again). */
  onResize: (() => void) | null = null;

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
      this.onResize?.();
    } else if (e === "br" && this.brSends >= 0 && ++this.brSends >= BROTLI_BEST_AFTER && !refining && performance.now() >= nextRefineAt) {
      this.refineBrotli(b);
    }
    return b;
  }

  /** Re-encodes brotli at the best quality in the background; keeps the smaller of the two. */
  private refineBrotli(current: Buffer): void {
    refining = true;
    this.brSends = -1;
    const started = performance.now();
    brotliCompress(this.identity, BROTLI_BEST(this.identity.length), (err, best) => {
      refining = false;
      const ended = performance.now();
      nextRefineAt = ended + 4 * (ended - started);
      if (err || best.length >= current.length || this.encoded.br !== current) return;
      this.encoded.br = best;
      this.extra += best.length - current.length;
      this.onResize?.();
    });
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
  // Every operation's answer, success or error, is sent here: count it for /metrics.
  req.routeOptions.config.metrics?.observe(reply.statusCode, (performance.now() - req.startedAt) / 1000);
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
