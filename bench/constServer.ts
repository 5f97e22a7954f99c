/**
 * The baseline: bare Fastify routes that return a constant (`node --import tsx bench/constServer.ts PORT`).
 * GET /const for the GET operations; POST /const, which also parses a JSON body, for raw_item.
 * Like the node, it settles the nextTick record's hidden classes first (src/api/tickShape.ts):
 * without that, a start of either is fast or about 2.5 µs per request slower by chance, and the
 * ratios would measure that chance, not the node's work.
 */
import Fastify from "fastify";
import { settleNextTickShape } from "../src/api/tickShape.js";

settleNextTickShape();

const app = Fastify({ logger: false });
app.get("/const", async () => ({ ok: true }));
app.post("/const", async () => ({ ok: true }));
const port = Number(process.argv[2] ?? 0);
const url = await app.listen({ host: "127.0.0.1", port });
console.log(url);
