/**
 * Names the JavaScript in a callgrind dump of a Node server: callgrind knows no symbols for code V8
 * compiled at run time and names it by address (`0x000000000d046880`); Node's `--perf-basic-prof`
 * writes where each compiled function lies (`/tmp/perf-<pid>.map`). This writes `<dump>.named`
 * with every such address replaced by its function's name (`JS:*send .../compression.js:150`), so
 * `callgrind_annotate --inclusive=yes <dump>.named` shows the JavaScript by name, steady-state and
 * in instructions (the dumps of `npm run bench:instructions -- --perf-map`).
 *
 *   node bench/tools/callgrindNames.mjs DUMP... [--map /tmp/perf-PID.map]
 *
 * The map file is read from the dump's `pid:` line unless given.
 */
import { readFileSync, writeFileSync } from "node:fs";

const argv = process.argv.slice(2);
const mapAt = argv.indexOf("--map");
const mapFile = mapAt === -1 ? null : argv[mapAt + 1];
const dumps = mapAt === -1 ? argv : argv.filter((_, i) => i !== mapAt && i !== mapAt + 1);

/** The perf map's ranges, sorted by start: [start, end, name]. */
function readMap(file) {
  const ranges = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (m) ranges.push([Number.parseInt(m[1], 16), Number.parseInt(m[1], 16) + Number.parseInt(m[2], 16), m[3]]);
  }
  return ranges.sort((a, b) => a[0] - b[0]);
}

/** The name of the range holding `addr` (the last one starting at or below it), or null. */
function nameAt(ranges, addr) {
  let lo = 0;
  let hi = ranges.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid][0] <= addr) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found !== -1 && addr < ranges[found][1] ? ranges[found][2] : null;
}

for (const dump of dumps) {
  const text = readFileSync(dump, "utf8");
  const pid = /^pid: (\d+)$/m.exec(text)?.[1];
  const ranges = readMap(mapFile ?? `/tmp/perf-${pid}.map`);
  let named = 0;
  let unnamed = 0;
  const out = text.replace(/^(c?fn=\(\d+\)) 0x([0-9a-f]{16})$/gm, (whole, head, hex) => {
    const name = nameAt(ranges, Number.parseInt(hex, 16));
    if (name === null) {
      unnamed++;
      return whole;
    }
    named++;
    return `${head} ${name}`;
  });
  writeFileSync(`${dump}.named`, out);
  console.error(`${dump}.named: ${named} addresses named, ${unnamed} not in the map`);
}
