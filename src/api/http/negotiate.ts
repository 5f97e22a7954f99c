/**
 * Content negotiation (docs/decisions.md §3), as the reference node: the `Accept` entries are ranked
 * by q-value (highest first, header order among equals; RFC 9110 §12.5.1), entries with `q=0`
 * are excluded, and the first that is exactly `application/json` or `application/x-bcs`
 * (other parameters ignored) wins; otherwise JSON. Never 406.
 */

export type WireFormat = "json" | "bcs";

export const JSON_TYPE = "application/json";
/** The content type of a JSON answer, error or data, compressed or not: the reference's (poem's `Json`). */
export const JSON_ANSWER_TYPE = "application/json; charset=utf-8";
export const BCS_TYPE = "application/x-bcs";

/** RFC 9110 `qvalue`: 0 to 1 with at most three decimals. */
const QVALUE = /^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/u;

/** The format the best-ranked `application/json` or `application/x-bcs` entry names, or null. */
export function namedType(accept: string | undefined): WireFormat | null {
  if (!accept) return null;
  // What clients send most.
  if (accept === BCS_TYPE) return "bcs";
  if (accept === JSON_TYPE) return "json";
  return rank(accept);
}

function rank(accept: string): WireFormat | null {
  let best: WireFormat | null = null;
  let bestQ = 0;
  for (const entry of accept.split(",")) {
    const [type = "", ...params] = entry.split(";");
    const t = type.trim().toLowerCase();
    if (t !== JSON_TYPE && t !== BCS_TYPE) continue;
    let q = 1;
    for (const p of params) {
      const eq = p.indexOf("=");
      if (p.slice(0, eq).trim().toLowerCase() !== "q") continue;
      const v = p.slice(eq + 1).trim();
      // A malformed weight makes the entry unusable rather than guessed at.
      q = QVALUE.test(v) ? Number(v) : 0;
    }
    // Strictly greater: among equal weights the earlier entry stays first.
    if (q > bestQ) {
      best = t === JSON_TYPE ? "json" : "bcs";
      bestQ = q;
    }
  }
  return best;
}

/** The response format: the one the Accept header names, else JSON. */
export function acceptType(accept: string | undefined): WireFormat {
  return namedType(accept) ?? "json";
}
