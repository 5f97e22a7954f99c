/**
 * Content negotiation (DECISIONS §12): `Accept` is read in order; the first entry that is exactly
 * `application/json` or `application/x-bcs` (parameters and q-values ignored) wins; otherwise JSON.
 * Never 406.
 */
export type WireFormat = "json" | "bcs";

export const JSON_TYPE = "application/json";
export const BCS_TYPE = "application/x-bcs";

/** The format the first exact `application/json` or `application/x-bcs` entry names, or null. */
export function namedType(accept: string | undefined): WireFormat | null {
  if (!accept) return null;
  // What clients send most, without splitting (a split costs a runtime call per request).
  if (accept === BCS_TYPE) return "bcs";
  if (accept === JSON_TYPE) return "json";
  for (const part of accept.split(",")) {
    const semi = part.indexOf(";");
    const t = (semi === -1 ? part : part.slice(0, semi)).trim().toLowerCase();
    if (t === JSON_TYPE) return "json";
    if (t === BCS_TYPE) return "bcs";
  }
  return null;
}

/** The response format: the one the Accept header names, else JSON. */
export function acceptType(accept: string | undefined): WireFormat {
  return namedType(accept) ?? "json";
}
