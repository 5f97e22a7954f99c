/**
 * The baseline: bare Fastify routes that return a constant (`node --import tsx bench/constServer.ts PORT`).
 * GET /const for the GET operations; POST /const, which also parses a JSON body, for raw_item.
 */
import Fastify from "fastify";

const app = Fastify({ logger: false });
app.get("/const", async () => ({ ok: true }));
app.post("/const", async () => ({ ok: true }));
const port = Number(process.argv[2] ?? 0);
const url = await app.listen({ host: "127.0.0.1", port });
console.log(url);
