/**
 * An upstream served under a path, as providers serve a node (`http://host/TOKEN/v1`): a request
 * under `/TOKEN/v1` is passed to the fake upstream's `/v1` with the rest of its target as it
 * arrived; anything else is answered 404 here. Every request target is recorded as it arrived, with
 * its `Authorization`, before anything else happens to it. A test may answer requests itself
 * (`answer`: a dripping body, a late one, extra headers) or stop listening (`stop`, `listen`).
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** A request as it reached the gateway. */
export interface Arrival {
  method: string;
  /** The request target exactly as sent. */
  target: string;
  authorization: string | undefined;
}

export class PathGateway {
  /** Every request received, in order. */
  readonly arrivals: Arrival[] = [];
  /** When set, asked first for every request under the prefix: true when it answered it itself. */
  answer: ((req: IncomingMessage, res: ServerResponse) => boolean) | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  private port = 0;

  private constructor(
    /** The fake upstream's `/v1` URL. */
    private readonly upstream: URL,
    /** The path the upstream's `/v1` is served under (`/TOKEN`). */
    readonly prefix: string,
  ) {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.on("connection", (s) => {
      this.sockets.add(s);
      s.once("close", () => this.sockets.delete(s));
    });
  }

  static async start(upstreamV1: string, prefix: string): Promise<PathGateway> {
    const g = new PathGateway(new URL(upstreamV1), prefix);
    await g.listen();
    return g;
  }

  /** `http://127.0.0.1:PORT/TOKEN/v1`, what `--follow` is given. */
  get base(): string {
    return `http://127.0.0.1:${this.port}${this.prefix}/v1`;
  }

  /** `127.0.0.1:PORT` */
  get hostPort(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Listens (again, on the same port once it had one). */
  listen(): Promise<void> {
    return new Promise((resolve) => {
      this.server.listen(this.port, "127.0.0.1", () => {
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  /** Stops listening and drops every connection: connecting then fails (ECONNREFUSED). */
  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const target = req.url ?? "";
    this.arrivals.push({ method: req.method ?? "", target, authorization: req.headers.authorization });
    const under = `${this.prefix}/v1`;
    if (target !== under && !target.startsWith(`${under}/`) && !target.startsWith(`${under}?`)) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: "not under the prefix", error_code: "web_framework_error" }));
      return;
    }
    if (this.answer?.(req, res)) return;
    const headers = { ...req.headers, host: this.upstream.host };
    const out = request(
      { host: this.upstream.hostname, port: this.upstream.port, method: req.method, path: `/v1${target.slice(under.length)}`, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  }
}
