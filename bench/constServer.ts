/**
 * The baseline: bare Fastify routes that return a constant (`node --import tsx bench/constServer.ts PORT [DIR]`).
 * GET /const for the GET operations; POST /const, which also parses a JSON body, for raw_item.
 * GET /bytes/NAME sends the file DIR/NAME as it is (a page body the node sent, saved by the bench):
 * what sending those bytes costs with no work behind them (`.br`: with `content-encoding: br`).
 * Like the node, it settles the nextTick record's hidden classes first (src/api/tickShape.ts):
 * without that, a start of either is fast or about 2.5 µs per request slower by chance, and the
 * ratios would measure that chance, not the node's work.
 */
import Fastify from "fastify";
import { readdirSync, readFileSync } from "node:fs";
import { settleNextTickShape } from "../src/api/tickShape.js";

settleNextTickShape();

const app = Fastify({ logger: false });
app.get("/const", async () => ({ ok: true }));
app.post("/const", async () => ({ ok: true }));
const dir = process.argv[3];
const bodies = new Map(dir ? readdirSync(dir).map((n) => [n, readFileSync(`${dir}/${n}`)] as const) : []);
app.get<{ Params: { name: string } }>("/bytes/:name", (req, reply) => {
  const body = bodies.get(req.params.name);
  if (!body) return reply.code(404).send({ message: `no body ${req.params.name}` });
  if (req.params.name.endsWith(".br")) reply.header("content-encoding", "br");
  return reply.type("application/json").send(body);
});
const port = Number(process.argv[2] ?? 0);
const url = await app.listen({ host: "127.0.0.1", port });
console.log(url);
