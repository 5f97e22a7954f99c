/**
 * Forwarding without a forward per method: a store answers most of its contracts' calls with
 * objects of its parts (its dialect's reads, `sqlite/reads.ts` and `postgres/reads.ts`; its
 * follow-base bookkeeping, `followBase.ts`), and a replica with the store it wraps. Each takes
 * every method of the part it does not define itself, so a method added to a part's class is
 * answered with nothing written here or in the store.
 */

/** A method as a part has it: called with the part as `this`. */
// biome-ignore lint/complexity/noBannedTypes: any method of any part; its type is the contract's
export type Method = Function;

/** The methods of `T` (its function-valued members), without its data members. */
export type MethodsOf<T> = { [K in keyof T as T[K] extends Method ? K : never]: T[K] };

/**
 * The names of every method `part` has: its own function-valued properties, then those of its
 * class and the classes it extends.
 */
export function methodNames(part: object): string[] {
  const names: string[] = [];
  const seen = new Set<string>(["constructor"]);
  for (let o: object | null = part; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (seen.has(name)) continue;
      seen.add(name);
      if (typeof Object.getOwnPropertyDescriptor(o, name)?.value === "function") names.push(name);
    }
  }
  return names;
}

/**
 * Gives `target` each method of `part` that `target` does not have itself (its own or its
 * class's), as `part` gives it now (through a proxy's trap, when `part` is one), bound to `part`,
 * or what `wrap` makes of it.
 */
export function forwardMethods(target: object, part: object, wrap?: (name: string, bound: Method) => Method): void {
  const slots = target as Record<string, unknown>;
  const methods = part as Record<string, Method>;
  for (const name of methodNames(part)) {
    if (name in target) continue;
    const bound = methods[name]!.bind(part);
    slots[name] = wrap ? wrap(name, bound) : bound;
  }
}

/**
 * The base of a class whose instances answer the methods of `Parts` with parts made in its
 * constructor, which ends with `this.forwardTo(...)`: the class then type-checks as having them.
 */
export function Forwarding<Parts extends object>(): abstract new () => Forwarded & Parts {
  return Forwarded as unknown as abstract new () => Forwarded & Parts;
}

abstract class Forwarded {
  /** Forwards the methods of `parts` this object does not define (the first part to have one wins). */
  protected forwardTo(...parts: object[]): void {
    for (const part of parts) forwardMethods(this, part);
  }
}
