// The top entries of V8 .cpuprofile files by self time: `node bench/profileTop.mjs FILE... [--top 25]`.
// Per file: total sampled ms, then functions (name, file:line) with their self ms and share.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const topAt = args.indexOf("--top");
const top = topAt === -1 ? 25 : Number(args[topAt + 1]);
const files = args.filter((a, i) => a !== "--top" && i !== topAt + 1);
for (const f of files) {
  const p = JSON.parse(readFileSync(f, "utf8"));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = p.timeDeltas;
  for (let i = 0; i < p.samples.length; i++) {
    const n = byId.get(p.samples[i]);
    const cf = n.callFrame;
    const key = `${cf.functionName || "(anonymous)"} ${cf.url.replace(/^.*\/(dist|node_modules|node:internal)\//, "$1/")}:${cf.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`\n${f}: ${(total / 1000).toFixed(0)} ms sampled`);
  for (const [k, us] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
  }
}
