/**
 * Response compression, on by default like the reference node's (`api.compression_enabled`):
 * a body at or above the threshold is sent br, gzip or deflate when the client's
 * Accept-Encoding asks for it (the official SDKs send `gzip, deflate, br`).
 *
 * `@fastify/compress` compresses whatever a handler sends, per request. Pages served from the page
 * cache (`pageCache.ts`) are compressed once instead: `EncodedBody` keeps each encoding it was
 * asked for, and `sendBody` sends it with the same negotiation, which the plugin then passes on.
 */
import compress from "@fastify/compress";
import { negotiate } from "@fastify/accept-negotiator";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { brotliCompressSync, constants, deflateSync, gzipSync } from "node:zlib";
import type { ApiConfig } from "./config.js";

export type Encoding = "br" | "gzip" | "deflate";
/** In order of preference when the client weighs several alike. */
const SUPPORTED = ["br", "gzip", "deflate", "identity"];
/** Brotli's default quality (11) costs far more CPU than it saves bytes; 4 is the plugin's choice. */
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };
/** BCS bodies (module bytecode) compress well too; JSON, YAML and HTML are known to mime-db. */
const BCS_TYPES = /^application\/x-bcs\b/;

export async function registerCompression(app: FastifyInstance, config: ApiConfig): Promise<void> {
  if (!config.compression) return;
  await app.register(compress, {
    encodings: SUPPORTED as never,
    threshold: config.compressionThreshold,
    customTypes: BCS_TYPES,
    brotliOptions: BROTLI,
    // Request bodies are tiny JSON (raw_item): no decompression of requests.
    globalDecompression: false,
  });
}

/** The encoding the plugin would choose for this Accept-Encoding, or null for identity. */
export function pickEncoding(acceptEncoding: string | string[] | undefined): Encoding | null {
  if (typeof acceptEncoding !== "string" || acceptEncoding === "") return null;
  // As the plugin does: `*` and the `x-gzip` alias mean gzip.
  const e = negotiate(acceptEncoding.toLowerCase().replace(/\*|x-gzip/gu, "gzip"), SUPPORTED);
  return e === "br" || e === "gzip" || e === "deflate" ? e : null;
}

/** A response body and the encodings of it made so far (each made once, on first request). */
export class EncodedBody {
  private readonly encoded: Partial<Record<Encoding, Buffer>> = {};
  private extra = 0;

  constructor(readonly identity: Buffer) {}

  /** Bytes held, every encoding included. */
  get size(): number {
    return this.identity.length + this.extra;
  }

  has(e: Encoding): boolean {
    return this.encoded[e] !== undefined;
  }

  encode(e: Encoding): Buffer {
    let b = this.encoded[e];
    if (!b) {
      b = e === "br" ? brotliCompressSync(this.identity, BROTLI) : e === "gzip" ? gzipSync(this.identity) : deflateSync(this.identity);
      this.encoded[e] = b;
      this.extra += b.length;
    }
    return b;
  }
}

/**
 * Sends `body` as `type`, encoded when compression is on, the body reaches the threshold and the
 * client accepts an encoding. Returns whether a new encoding was made (the body grew).
 */
export function sendBody(
  config: ApiConfig,
  req: FastifyRequest,
  reply: FastifyReply,
  body: EncodedBody,
  type: string,
): { reply: FastifyReply; grew: boolean } {
  reply.type(type);
  const e = config.compression && body.identity.length >= config.compressionThreshold ? pickEncoding(req.headers["accept-encoding"]) : null;
  if (!e) return { reply: reply.send(body.identity), grew: false };
  const grew = !body.has(e);
  const bytes = body.encode(e);
  const vary = reply.getHeader("vary");
  reply.header("vary", vary ? `${String(vary)}, accept-encoding` : "accept-encoding");
  reply.header("content-encoding", e);
  return { reply: reply.send(bytes), grew };
}
