/** PostgreSQL backend: see issue "PostgreSQL backend". Not built yet; selecting it fails clearly. */
import type { LedgerStore } from "../LedgerStore.js";

export const PostgresStore = {
  async connect(url: string): Promise<LedgerStore> {
    throw new Error(`PostgreSQL storage is not available in this build (asked for ${url.replace(/\/\/[^@]*@/, "//***@")})`);
  },
};
