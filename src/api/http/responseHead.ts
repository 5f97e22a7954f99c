/**
 * The headers every response of the node carries for its request: `X-Request-Id`, `Vary` and
 * CORS. Without an allow-list every origin gets `Access-Control-Allow-Origin: *` and no
 * credentials; origins on the list (`corsOrigins`) are echoed with
 * `Access-Control-Allow-Credentials: true`, and the others still get `*` (the data is public;
 * only credentials are withheld). Built once per app; per request it only picks a list.
 *
 * The node's own answers (`Compression.send`) are written with one `writeHead` of a flat list of
 * names and values, not through Fastify's reply: its header object, content-type parsing and
 * lowercasing cost a request more than the API's own work. Fastify's request log and onResponse
 * hooks still follow the response's `finish`, as they do for `reply.send`.
 */
import type { FastifyReply, FastifyRequest } from "fastify";

// Vary on every response, with or without Origin: a cache must not hand a response made without the
// CORS headers to a cross-origin caller (Fetch standard, "CORS protocol and HTTP caches").
const VARY = "Origin";
/** A body that could have been encoded also varies with what the client accepts. */
const VARY_ENCODING = "Origin, Accept-Encoding";

export class ResponseHead {
  private readonly trusted: ReadonlySet<string>;
  private readonly expose: string;

  constructor(corsOrigins: readonly string[], exposed: readonly string[]) {
    this.trusted = new Set(corsOrigins);
    this.expose = exposed.join(", ");
  }

  /**
   * A new flat list of the request's headers, in the order the node has always sent them: its id,
   * `Vary` (`varyEncoding`: with Accept-Encoding), then CORS when the request names an Origin.
   */
  start(req: FastifyRequest, varyEncoding: boolean): string[] {
    const vary = varyEncoding ? VARY_ENCODING : VARY;
    const origin = req.headers.origin;
    if (origin === undefined) return ["x-request-id", req.id, "vary", vary];
    if (this.trusted.size > 0 && this.trusted.has(origin)) {
      return [
        "x-request-id",
        req.id,
        "vary",
        vary,
        "access-control-allow-origin",
        origin,
        "access-control-allow-credentials",
        "true",
        "access-control-expose-headers",
        this.expose,
      ];
    }
    return ["x-request-id", req.id, "vary", vary, "access-control-allow-origin", "*", "access-control-expose-headers", this.expose];
  }

  /** The same headers set on a Fastify reply, for the responses sent through it (the preflight, /metrics, the proxy). */
  apply(req: FastifyRequest, reply: FastifyReply): void {
    const list = this.start(req, false);
    for (let i = 0; i < list.length; i += 2) reply.header(list[i]!, list[i + 1]!);
  }
}
