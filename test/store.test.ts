/** The shared store suite (`store.suite.ts`) on every backend of `backendFactories`. */
import { backendFactories } from "./helpers/backends.js";
import { storeSuite } from "./store.suite.js";

for (const factory of backendFactories) storeSuite(factory);
