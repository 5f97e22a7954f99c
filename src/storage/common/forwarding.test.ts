import { describe, expect, it } from "vitest";
import { Forwarding, forwardMethods, type MethodsOf, methodNames } from "./forwarding.js";

class Base {
  constructor(readonly name: string) {}
  greet(): string {
    return `base ${this.name}`;
  }
}

class Reads extends Base {
  readonly capability = { nested: () => "nested" };
  own = (): string => `own ${this.name}`;
  count(n: number): number {
    return n + 1;
  }
}

/** A store that answers `greet` itself: left out of what it forwards. */
class Store extends Forwarding<Omit<MethodsOf<Reads>, "greet">>() {
  constructor(readonly reads: Reads) {
    super();
    this.forwardTo(reads);
  }
  /** Defined here: never replaced by the part's method of the same name. */
  greet(): string {
    return "the store's own";
  }
}

describe("forwarding a part's methods", () => {
  it("names a part's own function properties and every method of its classes, not its data", () => {
    expect(methodNames(new Reads("r")).sort()).toEqual(["count", "greet", "own"]);
  });

  it("answers every method of the part, bound to it, and keeps the target's own", () => {
    const store = new Store(new Reads("r"));
    expect(store.count(1)).toBe(2);
    expect(store.own()).toBe("own r");
    expect(store.greet()).toBe("the store's own");
    expect("capability" in store).toBe(false);
  });

  it("answers a method added to the part's class with nothing written for it", () => {
    class MoreReads extends Reads {
      twice(n: number): number {
        return 2 * n;
      }
    }
    const target = {} as { twice?: (n: number) => number };
    forwardMethods(target, new MoreReads("m"));
    expect(target.twice?.(21)).toBe(42);
  });

  it("takes a proxied part's methods through its trap, and wraps each by name when asked", () => {
    const reads = new Reads("p");
    const trapped = new Proxy(reads, {
      get: (t, prop, receiver) => (prop === "count" ? (n: number) => n * 10 : Reflect.get(t, prop, receiver)),
    });
    const target: Record<string, unknown> = {};
    const wrapped: string[] = [];
    forwardMethods(target, trapped, (name, bound) => {
      wrapped.push(name);
      return bound;
    });
    expect((target.count as (n: number) => number)(3)).toBe(30);
    expect(wrapped.sort()).toEqual(["count", "greet", "own"]);
  });
});
