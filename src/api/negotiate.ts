/**
 * Content negotiation (DECISIONS §12): `Accept` is read in order; the first entry that is exactly
 * `application/json` or `application/x-bcs` (parameters and q-values ignored) wins; otherwise JSON.
 * Never 406.
 */
export type WireFormat = "json" | "bcs";

export const JSON_TYPE = "application/json";
export const BCS_TYPE = "application/x-bcs";

export function acceptType(accept: string | undefined): WireFormat {
  if (!accept) return "json";
  for (const part of accept.split(",")) {
    const semi = part.indexOf(";");
    const t = (semi === -1 ? part : part.slice(0, semi)).trim().toLowerCase();
    if (t === JSON_TYPE) return "json";
    if (t === BCS_TYPE) return "bcs";
  }
  return "json";
}

/** Whether the Accept header names JSON explicitly before BCS (raw_item refuses that). */
export function acceptNamesJsonOnly(accept: string | undefined): boolean {
  return accept !== undefined && acceptType(accept) === "json" && /application\/json/i.test(accept);
}
