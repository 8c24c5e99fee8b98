import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import { insertRate } from "../../src/db/queries/conversions.js";
import { uuidv7 } from "../../src/domain/ids.js";
import { createAsset } from "../../src/services/create-asset.js";
import { setPayoutPolicy } from "../../src/services/payout-policies.js";
import { setPayoutPreference } from "../../src/services/payout-preferences.js";
import { createPayout, getPayout } from "../../src/services/payouts.js";
import { payoutWorld, type PayoutWorld } from "../support/payout-world.js";

/**
 * A convert payout's parts leave the treasuries of the assets they are paid in, so each part is
 * bounded by its asset's payout policy as a payout asked for in that asset is: its largest payout,
 * its daily cap, and a second key above its approval threshold. Before, a part was judged by the
 * earnings asset's policy only: one operator key asked 5,000 in USD, paid all in TUSD, and 5,000
 * TUSD left the vault where TUSD's policy allowed 2,000 a day and a second key above 1,000.
 */
const U = 1_000_000n;
let w: PayoutWorld;

beforeAll(async () => {
  w = await payoutWorld();
  await createAsset(w.db, { code: "USD", scale: 6, settlement: { kind: "offchain" } });
  const [tusd, usd] = [(await getAssetByCode(w.db, "TUSD"))!, (await getAssetByCode(w.db, "USD"))!];
  const id = uuidv7();
  await insertRate(w.db, {
    id,
    baseAssetId: tusd.id,
    quoteAssetId: usd.id,
    num: 1n,
    den: 1n,
    observedAt: w.db.clock.now(),
    source: "manual",
    sourceRef: id,
    recordedAt: w.db.clock.now(),
  });
  await setPayoutPolicy(w.db, {
    asset: "TUSD",
    minAmount: 1n,
    schedule: "manual",
    maxPerPayout: 2_000n * U,
    maxPerDay: 2_000n * U,
    approvalThreshold: 1_000n * U,
    updatedBy: "test",
    now: w.db.clock.now(),
  });
}, 120_000);
afterAll(async () => {
  await w?.close();
});

const tusdPayouts = async (operator: string) => {
  const tusd = (await getAssetByCode(w.db, "TUSD"))!;
  return w.db.query<{ id: string; amount: string; status: string; approval: string | null }>(
    "select id, amount::text as amount, status, approval from payouts where operator_id = $1 and asset_id = $2 order by created_at, id",
    [operator, tusd.id],
  );
};

async function convertingOperator(id: string, usd: bigint) {
  await w.operator(id, { USD: usd });
  await setPayoutPreference(w.db, w.settlements, {
    now: w.db.clock.now(),
    by: "op-key",
    requestId: null,
    operatorId: id,
    asset: "USD",
    splits: [{ asset: "TUSD", bps: 10_000 }],
  });
}

const ask = (operator: string, amount: bigint, key: string) =>
  createPayout(w.db, w.settlements, { operatorId: operator, asset: "USD", amount, trigger: "request", requestedBy: "op-key", idempotencyKey: key });

async function ticks(n: number) {
  const worker = w.worker();
  for (let i = 0; i < n; i++) {
    await worker.tick();
    await w.chain.test.mine({ blocks: 1 });
  }
}

describe("a convert payout's parts and their asset's payout policy", () => {
  it("a part above the asset's largest payout is not converted: the payout waits, saying why, and nothing leaves the vault", async () => {
    await convertingOperator("big", 10_000n * U);
    const { payout } = await ask("big", 5_000n * U, "big-1");
    await ticks(4);
    expect(await tusdPayouts("big")).toEqual([]);
    const after = (await getPayout(w.db, payout.id))!;
    expect(after.status).toBe("pending");
    expect(after.note).toMatch(/waiting to convert: .*TUSD part \(5000000000\) is above the largest payout of TUSD \(2000000000/);
  }, 120_000);

  it("a part above the approval threshold waits for a second key; the daily cap counts the parts with the asset's other payouts", async () => {
    await convertingOperator("mid", 10_000n * U);
    const first = await ask("mid", 1_500n * U, "mid-1");
    await ticks(4);
    // Converted into a TUSD payout that needs approval: not paid.
    const [part] = await tusdPayouts("mid");
    expect(part).toMatchObject({ amount: (1_500n * U).toString(), approval: "required", status: "pending" });
    expect((await getPayout(w.db, first.payout.id))!.status).toBe("converted");
    // The proposal names where the part goes (the approving key sees the chain and the address).
    const proposals = await w.db.query<{ kind: string; settlement: string; chain_id: string; to_address: string }>(
      "select kind, payload->>'settlement' as settlement, payload->>'chain_id' as chain_id, payload->>'to_address' as to_address from proposals where payload->>'payout_id' = $1",
      [part!.id],
    );
    const to_address = (await w.db.query<{ to_address: string }>("select to_address from payouts where id = $1", [part!.id]))[0]!.to_address;
    expect(proposals).toEqual([{ kind: "payout", settlement: "evm", chain_id: "31337", to_address }]);
    expect(to_address).toMatch(/^0x[0-9a-f]{40}$/);
    // 1,500 of today's 2,000 TUSD are taken: a second 900 waits (converted, it would be 2,400).
    const second = await ask("mid", 900n * U, "mid-2");
    await ticks(2);
    expect(await tusdPayouts("mid")).toHaveLength(1);
    const waiting = (await getPayout(w.db, second.payout.id))!;
    expect(waiting.status).toBe("pending");
    expect(waiting.note).toMatch(/may still be paid in TUSD today \(500000000 of 2000000000/);
    // Within what is left (400 ≤ 500), a part is converted and paid without approval.
    await convertingOperator("small", 1_000n * U);
    await ask("small", 400n * U, "small-1");
    await ticks(6);
    expect(await tusdPayouts("small")).toEqual([expect.objectContaining({ amount: (400n * U).toString(), approval: null, status: "confirmed" })]);
  }, 120_000);

  it("a convert payout counts in its earnings asset's day once, as asked for: its part in that asset is not counted again, and converting it gives no room back", async () => {
    await setPayoutPolicy(w.db, {
      asset: "USD",
      minAmount: 1n,
      schedule: "manual",
      maxPerPayout: null,
      maxPerDay: 2_000n * U,
      approvalThreshold: null,
      updatedBy: "test",
      now: w.db.clock.now(),
    });
    const prefer = (operator: string, splits: { asset: string; bps: number }[]) =>
      setPayoutPreference(w.db, w.settlements, { now: w.db.clock.now(), by: "op-key", requestId: null, operatorId: operator, asset: "USD", splits });
    await w.operator("half", { USD: 10_000n * U });
    await prefer("half", [
      { asset: "USD", bps: 5_000 },
      { asset: "TUSD", bps: 5_000 },
    ]);
    const first = await ask("half", 1_000n * U, "half-1");
    await ticks(3);
    expect((await getPayout(w.db, first.payout.id))!.status).toBe("converted");
    // 1,000 of today's 2,000 USD (its 500 USD part is the same money): 900 more fit, then 200 do not.
    await expect(ask("half", 900n * U, "half-2")).resolves.toMatchObject({ replayed: false });
    await expect(ask("half", 200n * U, "half-3")).rejects.toMatchObject({ code: "payout_limit_exceeded" });
    // All in TUSD: once converted, the USD asked for still counts in USD's day.
    await convertingOperator("all", 10_000n * U);
    const whole = await ask("all", 2_000n * U, "all-1");
    await ticks(3);
    expect((await getPayout(w.db, whole.payout.id))!.status).toBe("converted");
    await expect(ask("all", 1n * U, "all-2")).rejects.toMatchObject({ code: "payout_limit_exceeded" });
  }, 120_000);
});
