/**
 * The baseline: bare Fastify routes that return a constant (`node --import tsx bench/constServer.ts PORT [DIR]`).
 * GET /const for the GET operations; POST /const, which also parses a JSON body, for raw_item.
 * GET and POST /replay/NAME send a response the node sent, saved by the bench: the body DIR/NAME
 * with the headers of DIR/NAME.headers (JSON; its ":status", if any, is the status). That is what sending the same response (the ledger
 * headers, the page's bytes, its encoding) costs with no work behind it.
 */
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import { readdirSync, readFileSync } from "node:fs";

const app = Fastify({ logger: false });
app.get("/const", async () => ({ ok: true }));
app.post("/const", async () => ({ ok: true }));

const dir = process.argv[3];
const saved = new Map<string, { status: number; headers: Record<string, string>; body: Buffer }>();
for (const name of dir ? readdirSync(dir) : []) {
  if (name.endsWith(".headers")) continue;
  const { ":status": status, ...headers } = JSON.parse(readFileSync(`${dir}/${name}.headers`, "utf8")) as Record<string, string>;
  saved.set(name, { status: Number(status ?? 200), headers, body: readFileSync(`${dir}/${name}`) });
}
const replay = (req: FastifyRequest<{ Params: { name: string } }>, reply: FastifyReply) => {
  const r = saved.get(req.params.name);
  if (!r) return reply.code(404).send({ message: `no saved response ${req.params.name}` });
  return reply.code(r.status).headers(r.headers).send(r.body);
};
app.get("/replay/:name", replay);
app.post("/replay/:name", replay);

const port = Number(process.argv[2] ?? 0);
const url = await app.listen({ host: "127.0.0.1", port });
console.log(url);
