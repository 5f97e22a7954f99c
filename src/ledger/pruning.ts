/**
 * The pruning window (docs/decisions.md §9): a number of versions (`90000000`, the reference node's
 * default) or a duration of chain time (`7d`, `12h`, `30m`, `45s`) measured back from the newest
 * block's timestamp. The oldest kept version is the first version of the first block kept whole
 * (`pruneTarget` in `src/ingest/pruneToWindow.ts` finds it in a store).
 */
export type PruneWindow = { kind: "versions"; versions: bigint } | { kind: "time"; micros: bigint; text: string };

export const DEFAULT_PRUNE_WINDOW = "90000000";
/** A devnet keeps a small window, so a long-running `npm start` stays small on disk. */
export const DEVNET_PRUNE_WINDOW = "2000";

const UNITS: Record<string, bigint> = { s: 1_000_000n, m: 60_000_000n, h: 3_600_000_000n, d: 86_400_000_000n };

/** Parses a window setting; throws a message naming the bad value. */
export function parsePruneWindow(text: string): PruneWindow {
  const t = text.trim();
  if (/^[0-9]{1,19}$/.test(t) && BigInt(t) > 0n) return { kind: "versions", versions: BigInt(t) };
  const m = /^([0-9]{1,12})([smhd])$/.exec(t);
  if (m && BigInt(m[1]!) > 0n) return { kind: "time", micros: BigInt(m[1]!) * UNITS[m[2]!]!, text: t };
  throw new Error(
    `invalid prune window ${JSON.stringify(text)}: give a positive number of versions (90000000) or a duration (7d, 12h, 30m, 45s)`,
  );
}

export function formatPruneWindow(w: PruneWindow): string {
  return w.kind === "versions" ? w.versions.toString() : w.text;
}
