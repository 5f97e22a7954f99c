/**
 * Node 20 makes a record for every `process.nextTick` call (several per HTTP request) from one
 * object literal, `{ [async_id_symbol]: id, [trigger_async_id_symbol]: id, callback, args }`.
 * In most starts of the node, V8's inline caches for its `callback` and `args` stores ended up
 * megamorphic, and every record was then made by a runtime call: about 2.5 µs more per request,
 * 63–65k instead of 70–76k req/s on GET /v1/info (bench/RESULTS.md, "API throughput"). Which
 * starts did was decided by timing: the same binary and data gave either state. Measured with
 * `%DebugPrint(process.nextTick)`: the two slots MEGAMORPHIC in every slow process, MONOMORPHIC in
 * every fast one; and by perf, `Runtime_DefineKeyedOwnPropertyInLiteral` under nextTick.
 *
 * The likely cause is the ids: they are read from a Float64Array, so they reach the literal as
 * small integers from some code and as heap numbers from other, and each new mix makes V8 retire
 * the literal's hidden classes for more general ones. `settleNextTickShape` leaves nothing to
 * retire: it builds one object through the same literal shape with a string in every field, which
 * moves each field to V8's most general representation at once, and keeps it alive so those hidden
 * classes stay. Every start measured since has been fast. If a later Node makes these records
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
