/**
 * Request ids: an incoming `X-Request-Id` is kept when it is sane (so a proxy's id follows the
 * request through our logs), else one is made of a per-process prefix and a counter, which is
 * unique across `--workers` processes and cheaper than a UUID per request.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";

const PREFIX = randomBytes(4).toString("hex");
let counter = 0;

/** Printable, no spaces or quotes, bounded: safe in a header, a log line and a metric. */
const SANE = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export function nextRequestId(): string {
  return `${PREFIX}-${(++counter).toString(36)}`;
}

/** Fastify's `genReqId`. */
export function requestId(req: IncomingMessage): string {
  const h = req.headers["x-request-id"];
  return typeof h === "string" && SANE.test(h) ? h : nextRequestId();
}
