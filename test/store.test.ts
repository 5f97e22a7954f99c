/** The shared store suite (`store.suite.ts`) on SQLite and on every PostgreSQL major (`everyMajorBackendFactories`). */
import { everyMajorBackendFactories } from "./helpers/backends.js";
import { storeSuite } from "./store.suite.js";

for (const factory of everyMajorBackendFactories) storeSuite(factory);
