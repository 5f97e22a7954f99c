/**
 * Node 20 makes a record for every `process.nextTick` call (several per HTTP request) from one
 * object literal, `{ [async_id_symbol]: id, [trigger_async_id_symbol]: id, callback, args }`.
 * In some starts of a process V8's inline caches for its stores end up megamorphic, and every
 * record is then made by a runtime call, which costs a point read a measurable share of its time
 * (bench/RESULTS.md, "API throughput"); which starts do is decided by timing. The likely cause is
 * the ids, which reach the literal as small integers from some code and as heap numbers from other.
 *
 * `settleNextTickShape` builds one object through the same literal shape with a string in every
 * field, which moves each field to V8's most general representation at once, and keeps it alive
 * so those hidden classes stay: nothing is left to retire. If a later Node makes these records
 * differently, the shape is not found and nothing is done.
 */
import { createHook } from "node:async_hooks";

/** Holds the settled hidden classes alive (through its own). */
let settled: object | null = null;

/**
 * Makes the nextTick record's hidden classes general, once per process. Returns the object that
 * holds them, or null when the record's shape is not Node 20's.
 */
export function settleNextTickShape(): object | null {
  if (settled) return settled;
  let record: object | null = null;
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === "TickObject" && record === null) record = resource as object;
    },
  });
  hook.enable();
  process.nextTick(() => {});
  hook.disable();
  if (!record) return null;
  const symbols = Object.getOwnPropertySymbols(record);
  if (symbols.length !== 2 || Reflect.ownKeys(record).length !== 4 || Object.keys(record).join() !== "callback,args") return null;
  const [asyncId, triggerId] = symbols as [symbol, symbol];
  // The same literal shape as Node's: two computed keys, then the two named ones, in its order.
  settled = { [asyncId]: "", [triggerId]: "", callback: "", args: "" };
  return settled;
}
