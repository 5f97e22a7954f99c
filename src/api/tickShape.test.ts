import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { settleNextTickShape } from "./tickShape.js";

describe("settleNextTickShape", () => {
  it("builds its object through the very hidden classes of Node's nextTick record", () => {
    // V8's %HaveSameMap needs --allow-natives-syntax, so this runs in a child process on the build.
    const script = `
      import { createHook } from "node:async_hooks";
      import { settleNextTickShape } from ${JSON.stringify(new URL("../../dist/api/tickShape.js", import.meta.url).href)};
      const settled = settleNextTickShape();
      let record = null;
      const hook = createHook({ init(id, type, t, r) { if (type === "TickObject") record = r; } });
      hook.enable();
      process.nextTick((a, b) => console.log(JSON.stringify({ args: [a, b] })), 1.5, "x");
      hook.disable();
      console.log(JSON.stringify({ found: settled !== null, sameMap: %HaveSameMap(settled, record) }));
    `;
    const r = spawnSync(process.execPath, ["--allow-natives-syntax", "--input-type=module", "-e", script], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    // the record made after settling shares the settled object's hidden class, and still works
    expect(lines).toEqual([{ found: true, sameMap: true }, { args: [1.5, "x"] }]);
  });

  it("settles once per process and hands back the same object", () => {
    const first = settleNextTickShape();
    expect(first).not.toBeNull();
    expect(settleNextTickShape()).toBe(first);
  });
});
