/**
 * Response compression, on by default like the reference node's (`api.compression_enabled`):
 * a body at or above the threshold is sent br, gzip or deflate when the client's
 * Accept-Encoding asks for it (the official SDKs send `gzip, deflate, br`).
 *
 * Every answer is sent through `Compression.send`. Bodies that are sent again and again (cached
 * pages, the spec, the explorer's assets) are `EncodedBody`s, which make each encoding once; a body
 * made per request is compressed per request, and only when it reaches the threshold. Not
 * `@fastify/compress`: it compresses every time, and its onSend hook costs every request, whether
 * or not the client asked.
 */
import { negotiate } from "@fastify/accept-negotiator";
import type { FastifyReply, FastifyRequest } from "fastify";
import {
  brotliCompress,
  brotliCompressSync,
  constants,
  deflate,
  deflateSync,
  gzip,
  gzipSync,
  type BrotliOptions,
  type ZlibOptions,
} from "node:zlib";
import type { ApiConfig } from "../config.js";
import type { ResponseHead } from "./responseHead.js";

export type Encoding = "br" | "gzip" | "deflate";
const ENCODINGS: readonly Encoding[] = ["br", "gzip", "deflate"];
/** In order of preference when the client weighs several alike. */
const SUPPORTED = ["br", "gzip", "deflate", "identity"];
/**
 * Every encoding is made at its fastest level first: most bodies are sent once (a page of a random
 * account or version, a body made per request), so a miss pays the least CPU for its bytes. For
 * brotli that is quality 0, its one-pass compressor: no more instructions than quality 1 and less
 * time, for about a tenth more bytes; zlib's is level 1 (bench/results/archive.md, "Measurements behind
 * the code's choices" and "API overhead against the floor"). A body sent again and again is worth
 * the best level once, made off the event loop: see `EncodedBody`.
 */
const BROTLI_FAST = 0;
const ZLIB_FAST: ZlibOptions = { level: 1 };
const ZLIB_BEST: ZlibOptions = { level: constants.Z_BEST_COMPRESSION };
/** Brotli at `quality`, told the body's size (it then sizes its window and buffers to it). */
const brotliAt = (quality: number, bytes: number): BrotliOptions => ({
  params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_SIZE_HINT]: bytes },
});
/** Sends of one body in one encoding after which that encoding is made again at its best level. */
export const BEST_AFTER = 16;

/** The encoding to send for this Accept-Encoding, or null for identity. */
export function pickEncoding(acceptEncoding: string): Encoding | null {
  // `*` and the `x-gzip` alias mean gzip (RFC 9110 §12.5.3 and §8.4.1.3).
  const n = negotiate(acceptEncoding.toLowerCase().replace(/\*|x-gzip/gu, "gzip"), SUPPORTED);
  return n === "br" || n === "gzip" || n === "deflate" ? n : null;
}

/** `bytes` in encoding `e` at its fast level. */
function encode(e: Encoding, bytes: Buffer): Buffer {
  if (e === "br") return brotliCompressSync(bytes, brotliAt(BROTLI_FAST, bytes.length));
  return e === "gzip" ? gzipSync(bytes, ZLIB_FAST) : deflateSync(bytes, ZLIB_FAST);
}

/** `bytes` in encoding `e` at its best level, on the thread pool. */
function encodeBest(e: Encoding, bytes: Buffer, done: (err: Error | null, out: Buffer) => void): void {
  if (e === "br") brotliCompress(bytes, brotliAt(constants.BROTLI_MAX_QUALITY, bytes.length), done);
  else if (e === "gzip") gzip(bytes, ZLIB_BEST, done);
  else deflate(bytes, ZLIB_BEST, done);
}

/**
 * Schedules the best-level encodings of an app: one at a time, and after one that took
 * t ms the next starts no sooner than 4t ms after it ended, so at most a fifth of one core goes to
 * them even when many pages turn hot at once.
 */
export class Refiner {
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
 * `b` in memory of its own size: zlib's synchronous calls return a slice of their 16 KiB output
 * chunk, and a small `Buffer` is a slice of Node's shared 8 KiB pool, so a body kept for long would
 * hold far more memory than its bytes (which is what the page cache counts).
 */
function ownSized(b: Buffer): Buffer {
  if (b.byteOffset === 0 && b.buffer.byteLength === b.length) return b;
  const own = Buffer.allocUnsafeSlow(b.length);
  b.copy(own);
  return own;
}

/**
 * A body sent many times, and the encodings of it made so far (each made once, when first asked
 * for, at its fast level). Once one encoding has been sent `BEST_AFTER` times it is made again at
 * its best level on the thread pool, off the event loop, and sent that way from then on: fewer
 * bytes for every later client (the decoded body is the same).
 */
export class EncodedBody {
  private readonly encoded: Partial<Record<Encoding, Buffer>> = {};
  private extra = 0;
  /** Sends of each encoding so far; -1 once its best level has been asked for. */
  private readonly sends: Partial<Record<Encoding, number>> = {};
  /** Called after the bytes held changed: a new encoding, or a smaller one (the page cache counts them again). */
  onResize: (() => void) | null = null;
  private body: Buffer;
  /** Whether the body is kept (`keep`): its buffers are then each in memory of its own size. */
  private kept = false;

  constructor(identity: Buffer) {
    this.body = identity;
  }

  /** The body itself. */
  get identity(): Buffer {
    return this.body;
  }

  /** Bytes held, every encoding included. */
  get size(): number {
    return this.body.length + this.extra;
  }

  /**
   * Marks the body as kept for later requests (the page cache calls it when it stores the page):
   * from then on the body and each encoding are held in memory of their own size (`ownSized`), so
   * the bytes `size` counts are the memory held. A body sent once is never copied.
   */
  keep(): void {
    if (this.kept) return;
    this.kept = true;
    this.body = ownSized(this.body);
    for (const e of ENCODINGS) {
      const b = this.encoded[e];
      if (b) this.encoded[e] = ownSized(b);
    }
  }

  encode(e: Encoding, refiner: Refiner): Buffer {
    let b = this.encoded[e];
    if (!b) {
      b = encode(e, this.body);
      if (this.kept) b = ownSized(b);
      this.encoded[e] = b;
      this.sends[e] = 0;
      this.extra += b.length;
      this.onResize?.();
    } else if (this.sends[e]! >= 0 && ++this.sends[e]! >= BEST_AFTER) {
      const current = b;
      if (refiner.tryStart((done) => this.refine(e, current, done))) this.sends[e] = -1;
    }
    return b;
  }

  /** Makes encoding `e` again at its best level in the background; keeps the smaller of the two. */
  private refine(e: Encoding, current: Buffer, done: () => void): void {
    encodeBest(e, this.body, (err, best) => {
      done();
      if (err || best.length >= current.length || this.encoded[e] !== current) return;
      this.encoded[e] = this.kept ? ownSized(best) : best;
      this.extra += best.length - current.length;
      this.onResize?.();
    });
  }
}

/** What counts an answer for /metrics (a route's `OperationMetrics`). */
interface AnswerCounter {
  observe(status: number, seconds: number): void;
}

/** No headers of an answer's own. */
const NONE: readonly string[] = Object.freeze([]);

/** The response compression of one app: its settings and its refiner. */
export class Compression {
  private readonly refiner = new Refiner();

  constructor(
    private readonly config: Pick<ApiConfig, "compression" | "compressionThreshold" | "plainMisses">,
    private readonly head: ResponseHead,
  ) {}

  /** The encoding to send for this Accept-Encoding, or null for identity. */
  encodingFor(acceptEncoding: string | string[] | undefined): Encoding | null {
    if (typeof acceptEncoding !== "string" || acceptEncoding === "") return null;
    return pickEncoding(acceptEncoding);
  }

  /**
   * Whether identity is acceptable: unless `identity;q=0`, or `*;q=0` without identity named
   * (RFC 9110 §12.5.3).
   */
  acceptsIdentity(acceptEncoding: string | string[] | undefined): boolean {
    if (typeof acceptEncoding !== "string" || acceptEncoding === "") return true;
    return identityAcceptable(acceptEncoding);
  }

  /**
   * Sends `body` as `type` with `status`: encoded when compression is on, the body has at least
   * the threshold's bytes and the client accepts an encoding (a body that could be encoded says so
   * in `Vary`). The head is the request's headers (`ResponseHead`), then `headers` and `more`
   * (flat lists of names and values: the ledger headers, the cursor, an answer's own), then the
   * content headers, written at once on the raw response (see `ResponseHead`). `made`: the body was
   * made for this request (not a cached page); with `plainMisses` it is sent uncompressed when the
   * client accepts identity, as compressing a body sent once costs about as much CPU as making it.
   * Every answer of the API, success or error, is sent here, and counted for /metrics in `metrics`
   * (by default the route's: a caller that holds them passes them, as Fastify builds the route's
   * options anew on each read of `req.routeOptions`).
   */
  send(
    req: FastifyRequest,
    reply: FastifyReply,
    status: number,
    body: string | Buffer | EncodedBody,
    type: string,
    headers: readonly string[] = NONE,
    more: readonly string[] = NONE,
    metrics: AnswerCounter | undefined = req.routeOptions.config.metrics,
    made = false,
  ): void {
    metrics?.observe(status, (performance.now() - req.startedAt) / 1000);
    const identity = body instanceof EncodedBody ? body.identity : body;
    const encodable = this.config.compression && !byteLengthBelow(identity, this.config.compressionThreshold);
    const accepted = req.headers["accept-encoding"];
    const e = encodable && !(made && this.config.plainMisses && this.acceptsIdentity(accepted)) ? this.encodingFor(accepted) : null;
    const list = this.head.start(req, encodable);
    for (let i = 0; i < headers.length; i++) list.push(headers[i]!);
    for (let i = 0; i < more.length; i++) list.push(more[i]!);
    let sent: string | Buffer;
    if (e === null) {
      sent = identity;
      list.push("content-type", type);
    } else {
      sent = body instanceof EncodedBody ? body.encode(e, this.refiner) : encode(e, typeof identity === "string" ? Buffer.from(identity) : identity);
      list.push("content-type", type, "content-encoding", e);
    }
    list.push("content-length", String(typeof sent === "string" ? Buffer.byteLength(sent) : sent.length));
    const res = reply.raw;
    res.writeHead(status, list);
    res.end(sent);
  }
}

function identityAcceptable(acceptEncoding: string): boolean {
  let star: boolean | null = null;
  for (const entry of acceptEncoding.toLowerCase().split(",")) {
    const [coding = "", ...params] = entry.split(";");
    const name = coding.trim();
    if (name !== "identity" && name !== "*") continue;
    let weight = 1;
    for (const p of params) {
      const [k = "", v = ""] = p.split("=");
      if (k.trim() === "q") weight = Number(v.trim());
    }
    if (name === "identity") return weight > 0;
    star = weight > 0;
  }
  return star ?? true;
}

/** Whether the body has fewer than `n` bytes (a string is measured only when it could be near). */
function byteLengthBelow(body: string | Buffer, n: number): boolean {
  if (typeof body !== "string") return body.length < n;
  if (body.length >= n) return false; // at least one byte per UTF-16 unit
  return body.length * 3 < n || Buffer.byteLength(body) < n;
}
