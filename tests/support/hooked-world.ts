import { afterAll, beforeAll, expect } from "vitest";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { freshDatabase, type TestDatabase } from "./db.js";
import { hookable } from "./hookable.js";
import { testApi, world, type TestApi } from "./http.js";

/** The test world (tests/support/http.ts) served over a hookable database, for the races of one file. */
export interface HookedWorld {
  raw: TestDatabase;
  hk: ReturnType<typeof hookable>;
  api: TestApi;
  w: Awaited<ReturnType<typeof world>>;
}

/**
 * One hookable world for the tests of a file: built before them (then `setup`), and after them the
 * ledger verified (no violation) and everything closed. Its fields are set once the file's tests run.
 */
export function hookedWorldPerFile(setup?: (t: HookedWorld) => Promise<void>): HookedWorld {
  const t = {} as HookedWorld;
  beforeAll(async () => {
    t.raw = await freshDatabase();
    t.hk = hookable(t.raw);
    t.api = await testApi({ db: t.hk.db });
    t.w = await world(t.api);
    await setup?.(t);
  }, 120_000);
  afterAll(async () => {
    if (t.api) expect((await verifyLedger(t.raw)).violations).toEqual([]);
    await t.api?.close();
    await t.raw?.destroy();
  });
  return t;
}
