/**
 * A strict parser of the Prometheus text exposition format (0.0.4): every line must be a HELP or
 * TYPE comment or a sample `name{label="value",...} value`, every sample must belong to a family
 * declared by TYPE, and histograms must be cumulative with `+Inf` equal to `_count`. Throws on the
 * first violation, so a scrape that parses is one Prometheus would take.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
  /** The value of the one sample named `name` whose labels include `labels`; undefined when none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"\s*(,|$)/y;

/** Values as Prometheus reads them (Go's ParseFloat: NaN and Inf in any case, as prom-client writes "Nan"). */
function parseValue(v: string, line: string): number {
  const l = v.toLowerCase();
  if (l === "+inf" || l === "inf") return Infinity;
  if (l === "-inf") return -Infinity;
  if (l === "nan") return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v)) throw new Error(`bad value in ${JSON.stringify(line)}`);
  return Number(v);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const out: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const at = LABEL.lastIndex;
    const m = LABEL.exec(text);
    if (!m || m.index !== at) throw new Error(`bad labels in ${JSON.stringify(line)}`);
    if (m[1]! in out) throw new Error(`label ${m[1]} twice in ${JSON.stringify(line)}`);
    out[m[1]!] = m[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
  }
  return out;
}

/** The family a sample name belongs to (`x_bucket`, `x_sum`, `x_count` belong to histogram `x`). */
function family(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (name.endsWith(suffix)) {
      const base = name.slice(0, -suffix.length);
      const t = types.get(base);
      if (t === "histogram" || (t === "summary" && suffix !== "_bucket")) return base;
    }
  }
  return undefined;
}

export function parsePrometheus(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  if (!text.endsWith("\n")) throw new Error("exposition must end with a newline");
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!m) continue; // other comments are allowed
      if (!NAME.test(m[2]!)) throw new Error(`bad metric name in ${JSON.stringify(line)}`);
      if (m[1] === "TYPE") {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(m[3] ?? "")) throw new Error(`bad type in ${JSON.stringify(line)}`);
        if (types.has(m[2]!)) throw new Error(`TYPE twice for ${m[2]}`);
        types.set(m[2]!, m[3]!);
      }
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`bad sample line ${JSON.stringify(line)}`);
    const name = m[1]!;
    if (family(name, types) === undefined) throw new Error(`sample ${name} has no TYPE`);
    samples.push({ name, labels: m[3] ? parseLabels(m[3], line) : {}, value: parseValue(m[4]!, line) });
  }
  checkHistograms(types, samples);
  return {
    types,
    samples,
    value(name, labels = {}) {
      const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
      if (hits.length > 1) throw new Error(`${hits.length} samples of ${name} match ${JSON.stringify(labels)}`);
      return hits[0]?.value;
    },
  };
}

/** Buckets cumulative in `le` order, and the `+Inf` bucket equal to `_count`, per label set. */
function checkHistograms(types: Map<string, string>, samples: Sample[]): void {
  for (const [name, type] of types) {
    if (type !== "histogram") continue;
    const series = new Map<string, Array<{ le: number; value: number }>>();
    for (const s of samples.filter((x) => x.name === `${name}_bucket`)) {
      const { le, ...rest } = s.labels;
      if (le === undefined) throw new Error(`${name}_bucket without le`);
      const key = JSON.stringify(Object.entries(rest).sort());
      series.set(key, [...(series.get(key) ?? []), { le: parseValue(le, le), value: s.value }]);
    }
    for (const [key, buckets] of series) {
      buckets.sort((a, b) => a.le - b.le);
      for (let i = 1; i < buckets.length; i++) {
        if (buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${name}${key}: buckets not cumulative`);
      }
      const inf = buckets[buckets.length - 1]!;
      if (inf.le !== Infinity) throw new Error(`${name}${key}: no +Inf bucket`);
      const labels = Object.fromEntries(JSON.parse(key) as Array<[string, string]>);
      const count = samples.find((s) => s.name === `${name}_count` && JSON.stringify(Object.entries(s.labels).sort()) === JSON.stringify(Object.entries(labels).sort()));
      if (!count || count.value !== inf.value) throw new Error(`${name}${key}: +Inf bucket ${inf.value} != _count ${count?.value}`);
    }
  }
}
