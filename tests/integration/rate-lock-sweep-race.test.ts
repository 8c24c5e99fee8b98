import { describe, expect, it } from "vitest";
import type { Queryable } from "../../src/db/client.js";
import { sweepRateLocks } from "../../src/services/rate-lock-sweep.js";
import { inTransaction } from "../../src/services/transaction.js";
import { NEEDS_PG, onRealPostgres } from "../support/db.js";
import { USD } from "../support/funding-world.js";
import { rateLockWorld } from "../support/rate-lock-world.js";

/**
 * sweepRateLocks reads what is withheld, then (in sweepLocks) the balance. A reversal of unfunded
 * usage committed between the two reads left the awaiting 89 USD subtracted from a balance that no
 * longer held it, and the honest lock of R1 (funded, still in the payable) was released for good.
 * The sweep now holds the operator's payout lock of the asset, which a reversal takes first: the
 * reversal started between the reads waits for the sweep's commit (here up to 1.5 s, then the sweep
 * goes on; before, it committed in that time).
 */
describe.skipIf(!onRealPostgres)(`a reversal of unfunded usage during a sweep ${NEEDS_PG}`, () => {
  const t = rateLockWorld();
  it("does not release the lock of funded earnings still in the payable", async () => {
    const { s } = t;
    await t.receive("c", 100n * USD, "w1");
    // R1: 89 USD funded, locked into ETH at 3000.
    await t.earn("c");
    expect(await t.lock()).toBe(1);
    // U: 89 USD on a claimed deposit (awaiting funds); the deposit fails and m reverses U.
    await t.claimed("d");
    const u = await t.earn("d");
    const usd = t.usd.id;
    let reversed = false;
    let reversal: Promise<unknown> | undefined;
    // A sweep (as the lock worker's or the conversion's), the reversal committing between its two reads.
    await inTransaction(s.w.db, async (tx) => {
      const racing: Queryable = {
        oneConnection: tx.oneConnection,
        queryValues: (q, p) => tx.queryValues(q, p),
        async query(q, p, o) {
          if (!reversed && q.includes("from rate_locks") && q.includes("for update")) {
            reversed = true;
            reversal = t.reverse(u.id);
            await Promise.race([reversal, new Promise((r) => setTimeout(r, 1500))]);
          }
          return tx.query(q, p, o);
        },
      };
      await sweepRateLocks(racing, "o", usd);
    });
    expect(reversed).toBe(true);
    await reversal;
    // R1's 89 USD is still in the payable, funded: its lock should stay open.
    expect(t.open(await t.locks())).toBe(89n * USD);
  }, 120_000);
});
