import { describe, expect, it } from "vitest";
import { usageMonth } from "../support/clock.js";
import { expectStatus, worldPerFile } from "../support/http.js";
import { holdLock } from "../support/locks.js";

/**
 * A month that starts closing and a change of the marketplace's time zone, at the same time: one of
 * them wins, and a stored period's bounds are always the months of the marketplace's time zone
 * (src/services/periods.ts: both take the marketplace's funding lock exclusively; the period change
 * reads the zone again under it).
 */
const t = worldPerFile();

const hold = (statement: string) => holdLock(t.api.db, statement);

describe("closing a month while the time zone changes", () => {
  it.skipIf(!process.env.TEST_DATABASE_URL)("the month is stored in the zone the marketplace keeps", async () => {
    // The period change reads the time zone, then waits for m2's funding lock, held by another connection.
    const lock = hold("select pg_advisory_xact_lock(hashtextextended('usage-funding:m2', 0))");
    await lock.isHeld;
    const close = t.api.call("PUT", `/v1/marketplaces/m2/periods/${usageMonth.label}`, { key: t.w.keys.finance, body: { status: "closing" } });
    await new Promise((r) => setTimeout(r, 300));
    const zone = t.api.call("PUT", "/v1/marketplaces/m2/time-zone", { body: { time_zone: "Asia/Tokyo" } });
    await new Promise((r) => setTimeout(r, 300));
    await lock.release();
    const [closed, zoned] = [await close, await zone];
    // The change of period asked first, so it wins; the zone is refused (a month was closing).
    expectStatus(closed, 200);
    expect(zoned.status).toBe(409);
    expect(zoned.body.code).toBe("period_transition");
    const m = expectStatus(await t.api.call("GET", "/v1/marketplaces/m2/periods/" + usageMonth.label, { key: t.w.keys.m2 }), 200).body;
    expect(m).toMatchObject({ status: "closing", time_zone: "UTC", starts_at: usageMonth.from.toISOString(), ends_at: usageMonth.to.toISOString() });
    const [row] = await t.api.db.query<{ starts_at: Date; ends_at: Date }>(
      "select starts_at, ends_at from accounting_periods where marketplace_id = 'm2' and period = $1",
      [usageMonth.label],
    );
    expect([new Date(row!.starts_at).toISOString(), new Date(row!.ends_at).toISOString()]).toEqual([
      usageMonth.from.toISOString(),
      usageMonth.to.toISOString(),
    ]);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)("a change of time zone that went first sends the change of period back", async () => {
    expectStatus(await t.api.call("POST", "/v1/marketplaces", { body: { id: "m3", name: "market m3" } }), 201);
    // The change of time zone takes m3's funding lock, then waits for m3's row, held by another connection.
    const row = hold("select 1 from marketplaces where id = 'm3' for update");
    await row.isHeld;
    const zone = t.api.call("PUT", "/v1/marketplaces/m3/time-zone", { body: { time_zone: "Asia/Tokyo" } });
    await new Promise((r) => setTimeout(r, 300));
    // The change of period reads the zone (UTC still), then waits for the funding lock.
    const close = t.api.call("PUT", `/v1/marketplaces/m3/periods/${usageMonth.label}`, { key: t.w.keys.finance, body: { status: "closing" } });
    await new Promise((r) => setTimeout(r, 300));
    await row.release();
    expectStatus(await zone, 200);
    const refused = await close;
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/time zone of marketplace m3 changed to Asia\/Tokyo/);
    expect(await t.api.db.query("select 1 from accounting_periods where marketplace_id = 'm3'")).toEqual([]);
  });
});
