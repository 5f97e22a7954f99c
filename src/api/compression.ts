/**
 * Response compression, on by default like the reference node's (`api.compression_enabled`):
 * a body at or above the threshold is sent br, gzip or deflate when the client's
 * Accept-Encoding asks for it (the official SDKs send `gzip, deflate, br`).
 *
 * Every answer is sent through `Compression.send`. Bodies that are sent again and again (cached
 * pages, the spec, the explorer's assets) are `EncodedBody`s, which make each encoding once; a body
 * made per request is compressed per request, and only when it reaches the threshold. Not
 * `@fastify/compress`: it compresses every time, and its onSend hook costs every request, whether
 * or not the client asked (bench/RESULTS.md).
 */
import { negotiate } from "@fastify/accept-negotiator";
import type { FastifyReply, FastifyRequest } from "fastify";
import { brotliCompress, brotliCompressSync, constants, deflateSync, gzipSync } from "node:zlib";
import { LRUCache } from "lru-cache";
import type { ApiConfig } from "./config.js";

export type Encoding = "br" | "gzip" | "deflate";
/** In order of preference when the client weighs several alike. */
const SUPPORTED = ["br", "gzip", "deflate", "identity"];
/**
 * Brotli per request at quality 3: its default, 11, costs about 100 times the CPU for about a sixth
 * fewer bytes, and quality 4 (the common choice for dynamic content, and tower-http's, which the
 * reference node compresses with) costs 1.6 to 1.8 times the CPU of 3 for the same bytes on our
 * pages: 201 against 113 µs for a summaries page of 100 (25,655 bytes to 4,641 and 4,633), 50
 * against 32 µs for a modules page of 25 (6,331 bytes to 625 and 622), on the 10M bench ledger. A
 * body sent again and again is worth the best quality once: see `EncodedBody`.
 */
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 3 } };
const BROTLI_BEST = (bytes: number) => ({
  params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: bytes },
});
/** Sends of one body's brotli encoding after which it is re-encoded at the best quality. */
export const BROTLI_BEST_AFTER = 16;

/** The encoding to send for this Accept-Encoding, or null for identity. */
export function pickEncoding(acceptEncoding: string): Encoding | null {
  // `*` and the `x-gzip` alias mean gzip (RFC 9110 §12.5.3 and §8.4.1.3).
  const n = negotiate(acceptEncoding.toLowerCase().replace(/\*|x-gzip/gu, "gzip"), SUPPORTED);
  return n === "br" || n === "gzip" || n === "deflate" ? n : null;
}

function encode(e: Encoding, bytes: Buffer): Buffer {
  return e === "br" ? brotliCompressSync(bytes, BROTLI) : e === "gzip" ? gzipSync(bytes) : deflateSync(bytes);
}

/**
 * Schedules the best-quality brotli encodings of an app: one at a time, and after one that took
 * t ms the next starts no sooner than 4t ms after it ended, so at most a fifth of one core goes to
 * them even when many pages turn hot at once.
 */
export class BrotliRefiner {
  private busy = false;
  private nextAt = 0;

  /** Runs `refine` now if the budget allows; `refine` calls `done` when it has finished. */
  tryStart(refine: (done: () => void) => void): boolean {
    if (this.busy || performance.now() < this.nextAt) return false;
    this.busy = true;
    const started = performance.now();
    refine(() => {
      this.busy = false;
      const ended = performance.now();
      this.nextAt = ended + 4 * (ended - started);
    });
    return true;
  }
}

/**
 * A body sent many times, and the encodings of it made so far (each made once, when first asked
 * for). Brotli is made at quality 3 first; once it has been sent `BROTLI_BEST_AFTER` times it is
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

  encode(e: Encoding, refiner: BrotliRefiner): Buffer {
    let b = this.encoded[e];
    if (!b) {
      b = encode(e, this.identity);
      this.encoded[e] = b;
      this.extra += b.length;
      this.onResize?.();
    } else if (e === "br" && this.brSends >= 0 && ++this.brSends >= BROTLI_BEST_AFTER) {
      const current = b;
      if (refiner.tryStart((done) => this.refineBrotli(current, done))) this.brSends = -1;
    }
    return b;
  }

  /** Re-encodes brotli at the best quality in the background; keeps the smaller of the two. */
  private refineBrotli(current: Buffer, done: () => void): void {
    brotliCompress(this.identity, BROTLI_BEST(this.identity.length), (err, best) => {
      done();
      if (err || best.length >= current.length || this.encoded.br !== current) return;
      this.encoded.br = best;
      this.extra += best.length - current.length;
      this.onResize?.();
    });
  }
}

/** The response compression of one app: its settings, its Accept-Encoding memo and its brotli refiner. */
export class Compression {
  /** Answers by Accept-Encoding text: clients send a handful of distinct ones, again and again. */
  private readonly picked = new LRUCache<string, Encoding | "identity">({ max: 256 });
  private readonly refiner = new BrotliRefiner();

  constructor(private readonly config: Pick<ApiConfig, "compression" | "compressionThreshold">) {}

  /** The encoding to send for this Accept-Encoding, or null for identity. */
  encodingFor(acceptEncoding: string | string[] | undefined): Encoding | null {
    if (typeof acceptEncoding !== "string" || acceptEncoding === "") return null;
    let e = this.picked.get(acceptEncoding);
    if (e === undefined) {
      e = pickEncoding(acceptEncoding) ?? "identity";
      this.picked.set(acceptEncoding, e);
    }
    return e === "identity" ? null : e;
  }

  /**
   * Sends `body` as `type`: encoded when compression is on, the body has at least the threshold's
   * bytes and the client accepts an encoding. A body that could be encoded says so in `Vary`.
   * Every answer of the API, success or error, is sent here, and counted for /metrics.
   */
  send(req: FastifyRequest, reply: FastifyReply, body: string | Buffer | EncodedBody, type: string): FastifyReply {
    req.routeOptions.config.metrics?.observe(reply.statusCode, (performance.now() - req.startedAt) / 1000);
    reply.type(type);
    const identity = body instanceof EncodedBody ? body.identity : body;
    if (!this.config.compression || byteLengthBelow(identity, this.config.compressionThreshold)) return reply.send(identity);
    const vary = reply.getHeader("vary");
    reply.header("vary", vary ? `${String(vary)}, Accept-Encoding` : "Accept-Encoding");
    const e = this.encodingFor(req.headers["accept-encoding"]);
    if (!e) return reply.send(identity);
    const bytes =
      body instanceof EncodedBody ? body.encode(e, this.refiner) : encode(e, typeof identity === "string" ? Buffer.from(identity) : identity);
    return reply.header("content-encoding", e).send(bytes);
  }
}

/** Whether the body has fewer than `n` bytes (a string is measured only when it could be near). */
function byteLengthBelow(body: string | Buffer, n: number): boolean {
  if (typeof body !== "string") return body.length < n;
  if (body.length >= n) return false; // at least one byte per UTF-16 unit
  return body.length * 3 < n || Buffer.byteLength(body) < n;
}
