/**
 * A decoder input that once made the BCS reader preallocate a huge array, decoded in a process of its
 * own (the built dist/, as `npm test` builds it): that process's peak memory shows any preallocation,
 * where a timing would not (the stock reader's array raised it by about 260 MB).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { moduleAbi } from "./abi.js";
import { hugeMetadataVectorLength } from "../../test/helpers/moveFuzz.js";

describe("decoder memory", () => {
  it("a huge BCS vector length in view metadata raises a process's peak memory by less than 64 MB", () => {
    const input = hugeMetadataVectorLength();
    const built = new URL("../../dist/move/abi.js", import.meta.url);
    expect(existsSync(built), `${built.pathname} is missing: run \`npm run build\` first (npm test does)`).toBe(true);
    const script = `import { moduleAbi } from ${JSON.stringify(built.href)};
      const input = Buffer.from(process.argv[1], "hex");
      const before = process.resourceUsage().maxRSS;
      const abi = moduleAbi(input);
      const grewKb = process.resourceUsage().maxRSS - before;
      console.log(JSON.stringify({ views: abi.exposed_functions.map((f) => f.is_view), grewKb }));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script, Buffer.from(input).toString("hex")], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { views: boolean[]; grewKb: number };
    expect(out.views).toEqual(moduleAbi(input)!.exposed_functions.map((f) => f.is_view));
    expect(out.grewKb, "peak memory growth of one decode (KB)").toBeLessThan(64 * 1024);
  });
});
