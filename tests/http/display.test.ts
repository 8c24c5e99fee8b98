import { encodeFunctionData } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { TestStablecoin } from "../../contracts/artifacts.js";
import { ahead, pastMonth } from "../support/clock.js";
import { displayPairs, expectedDisplay, parseCsv } from "../support/display.js";
import { expectStatus, proposeAndApprove, testApi, type TestApi } from "../support/http.js";
import { NATIVE, payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";

let w: PayoutWorld | undefined;
let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  await w?.close();
  w = undefined;
  api = undefined;
});

const month = pastMonth();

/** A write's answer, checked like a read's: what answered it, its body, and the scale of an answer that names no asset. */
type Answer = [string, unknown, number?];
type Call = (method: string, path: string, body?: unknown, key?: string, status?: number) => Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the API's JSON
/** A POST sent twice under one Idempotency-Key: the retry is answered with what the write's transaction stored. */
type Twice = (label: string, path: string, body: unknown, key: string) => Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the API's JSON

/**
 * Transfers of every kind between two accounts a marketplace opens in TUSD (a standard one, a batch,
 * holds posted in part and voided, a reversal): the answers of their writes, and where to read them.
 */
async function transferWrites(call: Call, twice: Twice, mk: string, assetId: string) {
  const account = async (body: Record<string, unknown>) =>
    (await call("POST", "/v1/accounts", { asset_id: assetId, normal_side: "credit", ...body }, mk)).id as string;
  const funding = await account({ code: "funding", normal_side: "debit", ref: "funding" });
  const wallet = await account({ code: "customer_wallet", ref: "wallet:c1" });
  const legs = (amount: string) => [{ debit_account_id: funding, credit_account_id: wallet, amount }];
  const standard = await twice("POST /v1/transfers", "/v1/transfers", { legs: legs("1500000") }, mk);
  const batch = await call("POST", "/v1/transfers", { transfers: [{ legs: legs("7") }, { legs: legs("30005") }] }, mk, 200);
  const held = await call("POST", "/v1/transfers", { type: "pending", timeout_seconds: 3600, legs: legs("1000") }, mk);
  const posted = await call("POST", `/v1/transfers/${held.id}/post`, { amount: "400" }, mk);
  const held2 = await call("POST", "/v1/transfers", { type: "pending", legs: legs("5") }, mk);
  const voided = await call("POST", `/v1/transfers/${held2.id}/void`, {}, mk);
  const reversal = await call("POST", `/v1/transfers/${standard.id}/reverse`, {}, mk);
  const answers: Answer[] = [
    ["POST /v1/transfers (batch)", batch],
    ["POST /v1/transfers (pending)", held],
    ["POST /v1/transfers/{id}/post", posted],
    ["POST /v1/transfers/{id}/void", voided],
    ["POST /v1/transfers/{id}/reverse", reversal],
  ];
  return { answers, transfer: standard.id as string, account: wallet };
}

/**
 * A world with something in every report: usage in TUSD (scale 6) with a reversal, a hold, a payout
 * on chain (gas in ETH, scale 18), one off chain in EUR (scale 2), a reconciliation run with an item
 * resolved, transfers of every kind, payout caps set, a postpaid customer with a credit limit; and
 * the answers of the writes that made them.
 */
async function setup() {
  w = await payoutWorld();
  api = await testApi({ db: w.db, settlements: w.settlements });
  const call: Call = async (method, path, body, key, status = 201) => expectStatus(await api!.call(method, path, { key, body }), status).body;
  const answers: Answer[] = [];
  const answer = async (label: string, method: string, path: string, body?: unknown, key?: string, status = 201) => {
    const out = await call(method, path, body, key, status);
    answers.push([label, out]);
    return out;
  };
  const twice: Twice = async (label, path, body, key) => {
    const request = { key, body, idempotencyKey: `twice:${path}:${answers.length}` };
    const first = expectStatus(await api!.call("POST", path, request), 201);
    const again = expectStatus(await api!.call("POST", path, request), 201);
    expect(again.headers.get("idempotent-replayed"), path).toBe("true");
    expect(again.body, path).toEqual(first.body);
    answers.push([label, first.body], [`${label} (replayed)`, again.body]);
    return first.body;
  };
  const finance = (await call("POST", "/v1/api-keys", { name: "finance", role: "finance" })).secret as string;
  const admin = (await call("POST", "/v1/api-keys", { name: "admin", role: "admin" })).secret as string;
  await call("POST", "/v1/marketplaces", { id: "mkt", name: "GPU market" });
  await call("POST", "/v1/marketplaces/mkt/fee-schedules", {
    effective_from: "2020-01-01T00:00:00Z",
    rules: [
      { party: "marketplace", bps: 1000 },
      { party: "protocol", bps: 150 },
    ],
  });
  const mk = (await call("POST", "/v1/api-keys", { name: "mkt", role: "marketplace", scope_id: "mkt" })).secret as string;
  await call("POST", "/v1/operators", { id: "op-1", name: "op-1" }, mk);
  await call("POST", "/v1/customers", { id: "pre", billing: "prepaid" }, mk);
  await answer(
    "POST /v1/customers",
    "POST",
    "/v1/customers",
    { id: "post", billing: "postpaid", credit_limits: [{ asset: TOKEN, credit_limit: "1000000000000" }] },
    mk,
  );
  await twice("POST /v1/customers/{id}/deposits", "/v1/customers/pre/deposits", { asset: TOKEN, amount: "50000000" }, mk);
  const record = (id: string, customer: string, quantity: string, price: string) => ({
    external_id: id,
    operator_id: "op-1",
    customer_id: customer,
    resource: "gpu:h100",
    unit: "gpu_hour",
    quantity,
    unit_price: price,
    asset: TOKEN,
    period_start: month.day(9).toISOString(),
    period_end: month.day(10).toISOString(),
  });
  const batch = await answer(
    "POST /v1/usage/batch",
    "POST",
    "/v1/usage/batch",
    { records: [record("j1", "pre", "10", "2.5"), record("j2", "post", "7", "1.75"), record("j3", "post", "1", "9.99")], results: "full" },
    mk,
    200,
  );
  await twice("POST /v1/usage", "/v1/usage", record("j4", "post", "3", "0.125"), mk);
  const j3 = batch.results.find((r: { external_id: string }) => r.external_id === "j3");
  await answer("POST /v1/usage/{id}/reverse", "POST", `/v1/usage/${j3.id}/reverse`, { reason: "meter fault" }, mk);
  const hold = await answer("POST /v1/holds", "POST", "/v1/holds", { customer_id: "pre", asset: TOKEN, amount: "1234567" }, mk);
  // The marketplace hands over the deposit it claimed, so op-1's earnings from it can be paid out.
  const receipt = await call("POST", "/v1/marketplaces/mkt/receipts", { asset: TOKEN, amount: "50000000", reference: "wire 1" }, finance);
  await call("POST", `/v1/proposals/${receipt.id}/approve`, {}, admin, 200);

  const acct = privateKeyToAccount(generatePrivateKey());
  const ch = await call("POST", "/v1/operators/op-1/payout-address-challenges", { chain_id: 31337, address: acct.address });
  // op-1 has earnings waiting: an admin's address for it takes a second key.
  await proposeAndApprove(api, "PUT", "/v1/operators/op-1/payout-address", {
    chain_id: 31337,
    address: acct.address,
    challenge_id: ch.id,
    signature: await acct.signMessage({ message: ch.message }),
  });
  const onChain = await answer("POST /v1/payouts", "POST", "/v1/payouts", { operator_id: "op-1", asset: TOKEN, amount: "20000001" }, finance);
  await w.drive([onChain.id]);
  await call("POST", "/v1/assets", { code: "EUR", scale: 2, settlement: { kind: "offchain" } });
  await w.credit("op-1", "EUR", 500_07n);
  const offChain = await call("POST", "/v1/payouts", { operator_id: "op-1", asset: "EUR", amount: "30005" }, finance);
  await answer("POST /v1/payouts/{id}/mark-paid", "POST", `/v1/payouts/${offChain.id}/mark-paid`, { reference: "SEPA-1" }, finance, 200);
  // Someone funds the vault outside the ledger: an unexpected inflow for the reconciliation.
  await w.chain.send({ to: w.chain.token, data: encodeFunctionData({ abi: TestStablecoin.abi, functionName: "mint", args: [w.chain.vault, 123_456_789n] }) });
  await w.chain.test.mine({ blocks: 3 });
  const head = Number(await w.chain.public.getBlockNumber()) - 1;
  const run = await call("POST", "/v1/reconciliations", { chain_id: 31337, asset: TOKEN, from_block: 0, to_block: head }, finance);
  const [inflow] = (await call("GET", `/v1/reconciliations/${run.id}?status=unexpected_on_chain`, undefined, finance, 200)).items;
  const resolved = await call("POST", `/v1/reconciliations/${run.id}/items/${inflow.id}/resolve`, { note: "treasury top-up" }, finance, 200);
  answers.push(["POST /v1/reconciliations/{id}/items/{item_id}/resolve", resolved, 6]);
  // Caps in every field, so that each amount of the policy and the operator's limits is a string.
  await proposeAndApprove(api, "PUT", `/v1/payout-policies/${TOKEN}`, {
    min_amount: "1",
    schedule: "manual",
    max_per_payout: "900000000",
    max_per_day: "2000000000",
    approval_threshold: "500000001",
  });
  await proposeAndApprove(api, "PUT", `/v1/operators/op-1/payout-limits/${TOKEN}`, { max_per_payout: "700000000", max_per_day: "3000000000" });
  const assets = (await call("GET", "/v1/assets", undefined, undefined, 200)).data as { id: string; code: string }[];
  const transfers = await transferWrites(call, twice, mk, assets.find((a) => a.code === TOKEN)!.id);
  answers.push(...transfers.answers);
  const customer = await call("GET", "/v1/customers/pre?marketplace_id=mkt", undefined, undefined, 200);
  return {
    api,
    finance,
    answers,
    transfers,
    j1: batch.results[0].id as string,
    hold: hold.id as string,
    onChain: onChain.id as string,
    run: run.id as string,
    customer,
  };
}

/** `check()`, its error naming the answer. */
function named<T>(what: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`);
  }
}

describe("amounts in reads and reports: the integer in smallest units and its display twin", () => {
  it("every amount of every JSON report, read and write's answer has its *_display twin, the exact formatting of the integer at its asset's scale", async () => {
    const { api, finance, answers, transfers, j1, hold, onChain, run, customer } = await setup();
    const assets = expectStatus(await api.call("GET", "/v1/assets"), 200).body.data as { id: string; code: string; scale: number }[];
    const scales = { byId: new Map(assets.map((a) => [a.id, a.scale])), byCode: new Map(assets.map((a) => [a.code, a.scale])) };
    const period = `from=${month.from.toISOString()}&to=${ahead(60_000).toISOString()}`;
    const reads: [string, number?][] = [
      ["/v1/reports/trial-balance"],
      [`/v1/reports/fee-revenue?${period}&group_by=month`],
      [`/v1/reports/payouts?${period}`],
      [`/v1/reports/operator-statements?${period}`],
      [`/v1/operators/op-1/earnings?${period}&group_by=resource`],
      [`/v1/operators/op-1/statement?${period}`],
      ["/v1/operators/op-1/balances"],
      ["/v1/usage?operator_id=op-1"],
      [`/v1/usage/${j1}`],
      ["/v1/payouts"],
      [`/v1/payouts/${onChain}`],
      [`/v1/holds/${hold}`],
      [`/v1/accounts/${customer.accounts[0].account_id}/balance`, 6],
      ["/v1/customers/pre?marketplace_id=mkt"],
      [`/v1/reconciliations/${run}`],
      [`/v1/treasury?chain_id=31337&asset=${TOKEN}`],
      [`/v1/treasury?chain_id=31337&asset=${NATIVE}`],
      ["/v1/transfers"],
      [`/v1/transfers/${transfers.transfer}`],
      [`/v1/accounts/${transfers.account}/entries`, 6],
      ["/v1/customers/post?marketplace_id=mkt"],
      ["/v1/customers?marketplace_id=mkt"],
      ["/v1/payout-policies"],
      [`/v1/operators/op-1/payout-limits/${TOKEN}`],
      [`/v1/marketplaces/mkt/usage-limits/${TOKEN}`],
      [`/v1/marketplaces/mkt/funding/${TOKEN}`],
    ];
    const bodies: Answer[] = [];
    for (const [path, rootScale] of reads) bodies.push([`GET ${path}`, expectStatus(await api.call("GET", path, { key: finance }), 200).body, rootScale]);
    expect(answers.length).toBeGreaterThanOrEqual(17);
    const seenScales = new Set<number>();
    for (const [path, body, rootScale] of [...bodies, ...answers]) {
      const pairs = named(path, () => displayPairs(body, scales, rootScale));
      expect(pairs.length, `${path}: no amounts`).toBeGreaterThan(0);
      for (const p of pairs) {
        expect(p.display, `${path} ${p.path} = ${p.units} at scale ${p.scale}`).toBe(expectedDisplay(p.units, p.scale));
        seenScales.add(p.scale);
      }
    }
    expect([...seenScales].sort((a, b) => a - b)).toEqual([2, 6, 18]);
    // Not through a float: 20.000001 TUSD stays exact, as does gas in wei.
    const payout = expectStatus(await api.call("GET", `/v1/payouts/${onChain}`, { key: finance }), 200).body;
    expect(payout).toMatchObject({ amount: "20000001", amount_display: "20.000001" });
  });

  it("every CSV report has the display columns of its amounts, the exact formatting of each row's integer", async () => {
    const { api, finance, run } = await setup();
    const assets = expectStatus(await api.call("GET", "/v1/assets"), 200).body.data as { code: string; scale: number }[];
    const scaleOf = new Map(assets.map((a) => [a.code, a.scale]));
    const period = `from=${month.from.toISOString()}&to=${ahead(60_000).toISOString()}`;
    const files: [string, number?][] = [
      ["/v1/reports/trial-balance?format=csv"],
      [`/v1/reports/fee-revenue?${period}&group_by=month&format=csv`],
      [`/v1/reports/payouts?${period}&format=csv`],
      [`/v1/reports/operator-statements?${period}&format=csv`],
      [`/v1/operators/op-1/earnings?${period}&group_by=resource&format=csv`],
      [`/v1/operators/op-1/statement?${period}&format=csv`],
      [`/v1/reconciliations/${run}?format=csv`, 6],
    ];
    for (const [path, fixedScale] of files) {
      const { header, rows } = parseCsv(expectStatus(await api.call("GET", path, { key: finance }), 200).body as string);
      const twins = header.filter((h) => h.endsWith("_display")).map((h) => [h.slice(0, -"_display".length), h] as const);
      expect(twins.length, path).toBeGreaterThan(0);
      for (const [base] of twins) expect(header, path).toContain(base);
      expect(rows.length, path).toBeGreaterThan(0);
      for (const r of rows) {
        const scale = fixedScale ?? scaleOf.get(r.asset!)!;
        for (const [base, twin] of twins) {
          if (!/^-?[0-9]+$/.test(r[base]!))
            expect(r[twin], `${path} ${base}`).toBe(""); // a total's status, or no amount
          else expect(r[twin], `${path} ${base}=${r[base]}`).toBe(expectedDisplay(r[base]!, scale));
        }
        for (const rate of ["effective_rate_per_hour", "effective_rate_per_unit"])
          if (header.includes(rate) && r[rate] !== "") expect(r[rate]).toBe(expectedDisplay(r[`${rate}_units`]!, scale));
      }
    }
  });
});
