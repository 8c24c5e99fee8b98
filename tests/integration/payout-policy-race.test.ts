import { afterEach, describe, expect, it } from "vitest";
import { createPayout, getPayout } from "../../src/services/payouts.js";
import { hookable } from "../support/hookable.js";
import { expectStatus, proposeAndApprove, testApi, type TestApi } from "../support/http.js";
import { payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";

let w: PayoutWorld | undefined;
let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  await w?.close();
  w = api = undefined;
});

const USD = 1_000_000n;

/**
 * An operator with 1,000 TUSD payable asks for a payout of 300 under a policy with no approval
 * threshold. Between the request's reading of the policy and its write, finance approves a
 * tighter policy (`policy`), as it would on learning the operator's key was stolen.
 */
async function payoutRacingPolicy(policy: Record<string, unknown>) {
  w = await payoutWorld();
  api = await testApi({ db: w.db, settlements: w.settlements });
  await w.operator("o", { [TOKEN]: 1_000n * USD });
  await proposeAndApprove(api, "PUT", `/v1/payout-policies/${TOKEN}`, { min_amount: "1", schedule: "manual" });
  const h = hookable(w.db);
  const world = w;
  const tight = api;
  // The last read before the request's transaction: the operator's payout address.
  h.arm(/from payout_addresses/, async () => {
    await proposeAndApprove(tight, "PUT", `/v1/payout-policies/${TOKEN}`, { min_amount: "1", schedule: "manual", ...policy });
  });
  const attempt = createPayout(h.db, world.settlements, {
    operatorId: "o",
    asset: TOKEN,
    amount: 300n * USD,
    trigger: "request",
    requestedBy: "operator-key",
    idempotencyKey: "stolen-key-payout",
  }).then(
    (r) => ({ ok: true as const, payout: r.payout }),
    (e: unknown) => ({ ok: false as const, error: e as { code?: string } }),
  );
  const result = await attempt;
  expect(h.fired()).toBe(true);
  return result;
}

describe("a payout request judged while its asset's payout policy changes", () => {
  it("a threshold approved while the request is under way applies to it: the payout waits for a second key", async () => {
    const r = await payoutRacingPolicy({ approval_threshold: (100n * USD).toString() });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect((await getPayout(w!.db, r.payout.id))!).toMatchObject({ approval: "required" });
    const proposals = expectStatus(await api!.call("GET", "/v1/proposals?kind=payout&status=proposed"), 200).body.data;
    expect(proposals).toHaveLength(1);
  });

  it("a largest payout lowered while the request is under way refuses it, writing nothing", async () => {
    const r = await payoutRacingPolicy({ max_per_payout: (100n * USD).toString() });
    expect(r.ok ? "created" : r.error.code).toBe("payout_limit_exceeded");
    expect(await w!.db.query("select id from payouts")).toEqual([]);
  });
});
