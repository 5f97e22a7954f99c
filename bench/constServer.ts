/** The baseline: a bare Fastify route that returns a constant (`node --import tsx bench/constServer.ts PORT`). */
import Fastify from "fastify";

const app = Fastify({ logger: false });
app.get("/const", async () => ({ ok: true }));
const port = Number(process.argv[2] ?? 0);
const url = await app.listen({ host: "127.0.0.1", port });
console.log(url);
