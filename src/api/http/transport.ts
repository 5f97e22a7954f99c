/**
 * What happens below the routes: requests the HTTP parser refuses, requests that arrive too slowly,
 * and connections over the cap. Each is answered with the JSON error object where a response can
 * still be sent, written straight to the socket (no route, no Fastify reply exists for them).
 */
import type { Server } from "node:http";
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyBaseLogger } from "fastify";
import { ApiError, clip } from "./apiError.js";
import type { NodeMetrics } from "../observability/metrics.js";
import { nextRequestId } from "../observability/requestId.js";

/** How long a refused or shed connection may linger (to read the client's bytes) before it is destroyed. */
const LINGER_MS = 1_000;

/** A complete HTTP/1.1 response carrying the error object, closing the connection. */
export function rawErrorResponse(status: number, message: string, extra: Record<string, string> = {}): string {
  const body = JSON.stringify(new ApiError(status, "web_framework_error", message).body());
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\nx-request-id: ${nextRequestId()}\r\n`;
  for (const [k, v] of Object.entries(extra)) head += `${k}: ${v}\r\n`;
  return `${head}\r\n${body}`;
}

/**
 * Sends `response` and closes: ends our side, reads and discards what the client still sends (so
 * the close is not a reset that could lose the response), and destroys the socket after a moment.
 */
function answerAndClose(socket: Socket, response: string): void {
  socket.on("error", () => undefined);
  const t = setTimeout(() => socket.destroy(), LINGER_MS);
  t.unref();
  socket.once("close", () => clearTimeout(t));
  socket.end(response);
  socket.resume();
}

/** Node's parser error codes that mean "the headers are too large". */
const TOO_LARGE = new Set(["HPE_HEADER_OVERFLOW"]);

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refused (400, 431) or that did not
 * arrive within the request or headers timeout (408). Nothing is sent when a response is already
 * under way on the socket (its status line went out): then the socket is only closed.
 */
export function clientErrorHandler(metrics: NodeMetrics, log: FastifyBaseLogger, requestTimeoutMs: number, headersTimeoutMs: number) {
  return function onClientError(err: NodeJS.ErrnoException & { reason?: string }, socket: Socket): void {
    if (err.code === "ECONNRESET" || socket.destroyed) return;
    let status: number;
    let message: string;
    if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      status = 408;
      message = `request timeout: the request's headers must arrive within ${headersTimeoutMs} ms and the whole request, body included, within ${requestTimeoutMs} ms`;
      metrics.requestTimeouts.inc();
    } else if (TOO_LARGE.has(err.code ?? "")) {
      status = 431;
      message = "request header fields too large";
      metrics.clientErrors.inc({ status: "431" });
    } else {
      status = 400;
      // The parser's reason names what was wrong ("Invalid method encountered"), never the bytes.
      message = `malformed HTTP request: ${clip(err.reason ?? err.code ?? "parse error")}`;
      metrics.clientErrors.inc({ status: "400" });
    }
    log.debug({ err: { code: err.code, reason: err.reason } }, `client error ${status}`);
    const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || current?.headersSent) {
      socket.destroy();
      return;
    }
    answerAndClose(socket, rawErrorResponse(status, message));
  };
}

/**
 * Caps the open connections of `server` at `max` (0: no cap). A connection over the cap never
 * reaches the HTTP parser: it is answered 503 with the error object as soon as its request starts
 * to arrive (or closed after a second when nothing arrives) and closed, so a flood costs a
 * descriptor per connection for a second at most. Returns the count of open connections.
 *
 * Chosen over Node's `server.maxConnections`, which closes such sockets without a word, so a client
 * cannot tell an overloaded node from a dead one.
 */
export function capConnections(server: Server, max: number, metrics: NodeMetrics, log: FastifyBaseLogger): () => number {
  let open = 0;
  const http = server.listeners("connection") as Array<(s: Socket) => void>;
  server.removeAllListeners("connection");
  const body = `too many open connections (${max}): try again later`;
  server.on("connection", (socket: Socket) => {
    if (max > 0 && open >= max) {
      metrics.connectionsShed.inc();
      socket.once("data", () => answerAndClose(socket, rawErrorResponse(503, body, { "retry-after": "1" })));
      socket.on("error", () => undefined);
      const t = setTimeout(() => socket.destroy(), LINGER_MS);
      t.unref();
      socket.once("close", () => clearTimeout(t));
      return;
    }
    open++;
    socket.once("close", () => open--);
    for (const l of http) l.call(server, socket);
  });
  // Once listening, a failing accept() (EMFILE when descriptors ran out after all) is logged, not
  // thrown: an 'error' event without a listener would end the process.
  server.once("listening", () => server.on("error", (e) => log.error({ err: e }, "HTTP server error")));
  return () => open;
}

/**
 * Requests Node answers itself, without a route, in its own shape: CONNECT (closed without a
 * word when no one listens) and an `Expect` other than 100-continue (an empty 417). Both are
 * answered with the error object here.
 */
export function answerRawEvents(server: Server): void {
  server.on("connect", (_req, socket: Socket) => {
    answerAndClose(socket, rawErrorResponse(405, "method not allowed", { allow: "GET, POST, OPTIONS" }));
  });
  server.on("checkExpectation", (req, res) => {
    const body = JSON.stringify(new ApiError(417, "web_framework_error", `expectation failed: only 100-continue is supported, got ${JSON.stringify(clip(String(req.headers.expect)))}`).body());
    res.writeHead(417, { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" });
    res.end(body);
  });
}
