import { afterEach, describe, expect, it } from "vitest";
import { ensureAccounts } from "../../src/db/ensure-accounts.js";
import { getAssetByCode } from "../../src/db/queries/assets.js";
import { writeTransfers } from "../../src/db/transfer-writer.js";
import { chart, specKey } from "../../src/domain/chart.js";
import type { Clock } from "../../src/domain/clock.js";
import { recoverReceivables } from "../../src/services/receivables.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { testClock, usageMonth, wideRange } from "../support/clock.js";
import { fundingWorld, USD, type FundingWorld } from "../support/funding-world.js";
import { expectStatus, writeCounts } from "../support/http.js";
import { TOKEN } from "../support/payout-world.js";

/**
 * Disputes and clawbacks (docs/reconciliation.md, "Disputes" and "Clawbacks and operator
 * receivables"; docs/ledger.md, "Clawbacks"), through the HTTP API on the world of
 * tests/support/funding-world.ts: marketplaces m and b (10% + 1% fees), operators o, o2 and honest
 * selling through m, prepaid customers c and d of m, TUSD (6 decimals) paid out on a local chain.
 * A record of 100 TUSD earns its operator 89 TUSD.
 */
const NET = 89n * USD;
const DAY = 86_400_000;

/** A clock that runs in real time from the test clock's now, and can be moved forward. */
function movableClock(): Clock & { forward(ms: number): void } {
  let offset = 0;
  return { now: () => new Date(testClock.now().getTime() + offset), forward: (ms) => void (offset += ms) };
}

let s: FundingWorld;
afterEach(async () => {
  if (s) expect((await verifyLedger(s.w.db)).violations).toEqual([]);
  await s?.close();
});

const call = (method: "GET" | "POST" | "PUT", path: string, key: string, body?: unknown) => s.api.call(method, path, { key, body });
const open = (usageIds: string[], key = s.keys.market, reason = "customer says the job failed") =>
  call("POST", "/v1/disputes", key, { usage_ids: usageIds, reason });
const uphold = (id: string, key = s.keys.finance) => call("POST", `/v1/disputes/${id}/uphold`, key, {});
const reject = (id: string, key = s.keys.finance) => call("POST", `/v1/disputes/${id}/reject`, key, { note: "the job's logs show it ran" });
/** The posted balance of one of the service's accounts on its normal side (0 when never opened). */
async function posted(ref: string, marketplaceId: string | null = null): Promise<bigint> {
  const asset = (await getAssetByCode(s.w.db, TOKEN))!;
  const [r] = await s.w.db.query<{ v: string }>(
    `select case when a.normal_side = 'credit' then b.credits_posted - b.debits_posted else b.debits_posted - b.credits_posted end::text as v
       from accounts a join account_balances b on b.account_id = a.id where a.asset_id = $1 and a.ref = $2 and coalesce(a.marketplace_id, '') = $3`,
    [asset.id, ref, marketplaceId ?? ""],
  );
  return BigInt(r?.v ?? 0);
}
const receivablesReport = async (format = "json") => call("GET", `/v1/reports/operator-receivables?format=${format}`, s.keys.finance);
/** Pays o `amount` on chain and waits for the payout to be confirmed. */
async function paid(operator: string, amount: bigint): Promise<void> {
  const p = expectStatus(await s.payout(operator, amount), 201).body;
  const [done] = await s.w.drive([p.id]);
  expect(done!.status).toBe("confirmed");
}

describe("a payout still pending when the operator comes to owe the platform", () => {
  it("is not sent while it owes: it waits with a note, and cancelled, its hold pays the debt back", async () => {
    s = await fundingWorld();
    await s.settle(100n * USD, "c wire 1", "c");
    const u = await s.usage("o", "c", 100n * USD);
    // o asks for its 89; before the worker's pass the record's dispute is upheld: the payout's hold
    // counts as paid, so o owes 89 back.
    const p = expectStatus(await s.payout("o", NET), 201).body;
    const d = expectStatus(await open([u.id]), 201).body;
    expectStatus(await uphold(d.id), 200);
    expect(await posted("operator:o:receivable")).toBe(NET);
    await s.w.worker().tick();
    const waiting = expectStatus(await call("GET", `/v1/payouts/${p.id}`, s.keys.o), 200).body;
    expect(waiting.status).toBe("pending");
    expect(waiting.note).toContain("owes");
    // Cancelled, the hold returns to the payable and pays the receivable back: nothing left the treasury.
    expectStatus(await call("POST", `/v1/payouts/${p.id}/cancel`, s.keys.o), 200);
    await recoverReceivables(s.w.db);
    expect(await posted("operator:o:receivable")).toBe(0n);
    expect(await posted("operator:o:payable")).toBe(0n);
    expect((await s.w.db.query("select id from payouts where status in ('batched', 'signed', 'submitted', 'confirmed')")).length).toBe(0);
  });
});

describe("disputes hold earnings until finance decides", () => {
  it("an open dispute holds its records' net: a payout above the rest is refused; rejected, it is released", async () => {
    s = await fundingWorld();
    await s.settle(200n * USD, "c wire 1", "c"); // c's own money: both records are funded
    const u1 = await s.usage("o", "c", 100n * USD);
    await s.usage("o", "c", 100n * USD);
    const d = expectStatus(await open([u1.id]), 201).body;
    expect(d).toMatchObject({ status: "open", marketplace_id: "m", records: [{ usage_id: u1.id, net: NET.toString(), usage_status: "posted" }] });
    expect(d.held).toEqual([{ operator_id: "o", asset: TOKEN, amount: NET.toString(), amount_display: "89" }]);
    expect(await s.balance("o")).toMatchObject({
      available: (2n * NET).toString(),
      payable_now: NET.toString(),
      held_by_disputes: NET.toString(),
      receivable: "0",
    });
    const before = await s.payoutRows();
    const refused = expectStatus(await s.payout("o", NET + 1n), 422).body;
    expect(refused.code).toBe("payout_withheld");
    expect(refused.detail).toContain("89 TUSD of its earnings are held by open disputes");
    expect(await s.payoutRows()).toBe(before);
    // Neither the marketplace that opened it nor an operator decides it.
    for (const key of [s.keys.market, s.keys.o]) {
      expect((await reject(d.id, key)).status).toBe(403);
      expect((await uphold(d.id, key)).status).toBe(403);
    }
    const rejected = expectStatus(await reject(d.id), 200).body;
    expect(rejected).toMatchObject({ status: "rejected", decision_note: "the job's logs show it ran", held: [] });
    expect(await s.balance("o")).toMatchObject({ payable_now: (2n * NET).toString(), held_by_disputes: "0" });
    expectStatus(await uphold(d.id, s.keys.finance2), 409);
    expectStatus(await s.payout("o", 2n * NET), 201);
    // Every call is in the audit log, refusals included; the dispute keeps its own history.
    const audited = await s.w.db.query<{ route: string; status: number }>(
      "select route, status from audit_log where path like '/v1/disputes%' order by at, id",
    );
    expect(audited.map((a) => `${a.route} ${a.status}`)).toEqual([
      "/v1/disputes 201",
      ...Array.from({ length: 2 }, () => ["/v1/disputes/:id/reject 403", "/v1/disputes/:id/uphold 403"]).flat(),
      "/v1/disputes/:id/reject 200",
      "/v1/disputes/:id/uphold 409",
    ]);
    const events = await s.w.db.query<{ status: string }>("select status from dispute_events where dispute_id = $1 order by id", [d.id]);
    expect(events.map((e) => e.status)).toEqual(["open", "rejected"]);
  });

  it("a dispute is decided by a key independent of its opener's: not one its opener created, nor one of the same creator", async () => {
    s = await fundingWorld();
    await s.settle(200n * USD, "c wire 1", "c");
    const u1 = await s.usage("o", "c", 100n * USD);
    // A person's admin key (made by the bootstrap key), and a finance key that person made: one person, two keys.
    const admin = s.keys.admin2;
    const own = expectStatus(await call("POST", "/v1/api-keys", admin, { name: "admin's own finance key", role: "finance" }), 201).body.secret as string;
    const d = expectStatus(await open([u1.id], admin), 201).body;
    const before = await writeCounts(s.w.db);
    for (const decide of [uphold, reject]) {
      const refused = expectStatus(await decide(d.id, own), 403).body;
      expect(refused).toMatchObject({ code: "four_eyes", detail: expect.stringMatching(/independent of the one that opened it/) });
    }
    expect(await writeCounts(s.w.db)).toEqual(before);
    // Another person's key decides it.
    expectStatus(await uphold(d.id, s.keys.finance), 200);
    // A marketplace's dispute is decided by the platform: another party, independent of its key.
    const u2 = await s.usage("o", "c", 50n * USD);
    const m = expectStatus(await open([u2.id]), 201).body;
    expectStatus(await reject(m.id, own), 200);
    // But a marketplace key an admin minted is that admin's: the admin (or a key of its own) does
    // not uphold the dispute it opened with it — before, it put the operator in debt alone.
    const minted = expectStatus(await call("POST", "/v1/api-keys", admin, { name: "m, by the admin", role: "marketplace", scope_id: "m" }), 201).body
      .secret as string;
    const u3 = await s.usage("o", "c", 50n * USD);
    const byMinted = expectStatus(await open([u3.id], minted), 201).body;
    const beforeMinted = await writeCounts(s.w.db);
    for (const key of [admin, own]) expect(expectStatus(await uphold(byMinted.id, key), 403).body.code).toBe("four_eyes");
    expect(await writeCounts(s.w.db)).toEqual(beforeMinted);
    expectStatus(await uphold(byMinted.id, s.keys.finance), 200);
  });

  it("upheld, its records are reversed: the customer refunded, the fees reversed, the operator's earnings taken back, exactly", async () => {
    s = await fundingWorld();
    await s.settle(200n * USD, "c wire 1", "c");
    const u1 = await s.usage("o", "c", 100n * USD);
    const u2 = await s.usage("honest", "c", 60n * USD); // 60 TUSD: fees 6 + 0.6, net 53.4
    expect(await posted("customer:c", "m")).toBe(40n * USD);
    const d = expectStatus(await open([u1.id, u2.id], s.keys.finance), 201).body;
    // The key that opened it may not decide it: four eyes.
    expect(expectStatus(await uphold(d.id, s.keys.finance), 403).body.code).toBe("four_eyes");
    const upheld = expectStatus(await uphold(d.id, s.keys.finance2), 200).body;
    expect(upheld.status).toBe("upheld");
    expect(upheld.records.map((r: { usage_status: string }) => r.usage_status)).toEqual(["reversed", "reversed"]);
    expect(await posted("customer:c", "m")).toBe(200n * USD);
    expect(await posted("marketplace:fees", "m")).toBe(0n);
    expect(await posted("protocol:fees")).toBe(0n);
    expect(await posted("operator:o:payable")).toBe(0n);
    expect(await posted("operator:honest:payable")).toBe(0n);
    expect(await posted("operator:o:receivable")).toBe(0n); // nothing was paid out: nothing to claw back
    // Decided once; the records are reversed once.
    expect(expectStatus(await reject(d.id, s.keys.admin2), 409).body.code).toBe("dispute_decided");
    expect(expectStatus(await call("POST", `/v1/usage/${u1.id}/reverse`, s.keys.market, { reason: "again" }), 409).body.code).toBe("already_reversed");
    expect(expectStatus(await open([u2.id]), 409).body.code).toBe("already_reversed");
    const reversals = await s.w.db.query<{ n: string }>("select count(*)::text as n from transfers where kind = 'reversal'");
    expect(reversals[0]!.n).toBe("2");
  });
});

describe("deciding is all or nothing, once", () => {
  it("an uphold one of whose reversals is refused (its period is being closed) writes nothing; once the period is open again it goes through", async () => {
    s = await fundingWorld();
    await s.settle(200n * USD, "c wire 1", "c");
    const u1 = await s.usage("o", "c", 100n * USD);
    const next = new Date(Date.UTC(usageMonth.from.getUTCFullYear(), usageMonth.from.getUTCMonth() + 1, 11));
    const u2 = await s.usage("o", "c", 100n * USD, {
      extra: { period_start: new Date(next.getTime() - 3_600_000).toISOString(), period_end: next.toISOString() },
    });
    const d = expectStatus(await open([u1.id, u2.id]), 201).body;
    await s.w.db.query(
      `insert into accounting_periods (marketplace_id, period, starts_at, ends_at, status, changed_by, changed_at) values ('m', $1, $2, $3, 'closing', 'test', $4)`,
      [usageMonth.label, usageMonth.from.toISOString(), usageMonth.to.toISOString(), s.w.db.clock.now().toISOString()],
    );
    const before = await writeCounts(s.w.db);
    expect(expectStatus(await uphold(d.id), 409).body.code).toBe("period_closing");
    expect(await writeCounts(s.w.db)).toEqual(before);
    expect(expectStatus(await call("GET", `/v1/disputes/${d.id}`, s.keys.market), 200).body).toMatchObject({
      status: "open",
      held: [{ amount: (2n * NET).toString() }],
    });
    await s.w.db.query("update accounting_periods set status = 'open' where marketplace_id = 'm'");
    expectStatus(await uphold(d.id), 200);
    expect(await posted("operator:o:payable")).toBe(0n);
  });

  it("at once: the same record disputed twice, and one dispute upheld and rejected by two keys — one wins, the other is refused", async () => {
    s = await fundingWorld();
    await s.settle(100n * USD, "c wire 1", "c");
    const u = await s.usage("o", "c", 100n * USD);
    const opened = await Promise.all([open([u.id]), open([u.id], s.keys.finance)]);
    expect(opened.map((r) => r.status).sort()).toEqual([201, 409]);
    const d = opened.find((r) => r.status === 201)!.body;
    const decided = await Promise.all([uphold(d.id, s.keys.finance2), reject(d.id, s.keys.admin2)]);
    expect(decided.map((r) => r.status).sort()).toEqual([200, 409]);
    const events = await s.w.db.query<{ status: string }>("select status from dispute_events where dispute_id = $1 order by id", [d.id]);
    expect(events).toHaveLength(2);
    const upheld = decided[0]!.status === 200;
    expect(await posted("operator:o:payable")).toBe(upheld ? 0n : NET);
    expect(await posted("customer:c", "m")).toBe(upheld ? 100n * USD : 0n);
  });
});

describe("clawbacks: earnings already paid become a receivable from the operator", () => {
  it("upheld after the payout: the payable goes to the receivable, the report shows it, nothing is paid while owing, later usage pays it back first", async () => {
    s = await fundingWorld();
    await s.settle(300n * USD, "c wire 1", "c");
    const u = await s.usage("o", "c", 100n * USD);
    await paid("o", NET);
    const d = expectStatus(await open([u.id]), 201).body;
    expect(await s.balance("o")).toMatchObject({ available: "0", payable_now: "0", held_by_disputes: NET.toString() });
    expectStatus(await uphold(d.id), 200);
    // The payable is whole (0), the operator owes what it was paid for the reversed record; the customer has its 100 back.
    expect(await posted("operator:o:payable")).toBe(0n);
    expect(await posted("operator:o:receivable")).toBe(NET);
    expect(await posted("customer:c", "m")).toBe(300n * USD);
    expect(await s.balance("o")).toMatchObject({ available: "0", payable_now: "0", receivable: NET.toString() });
    const report = expectStatus(await receivablesReport(), 200).body;
    expect(report.data).toEqual([
      expect.objectContaining({ operator_id: "o", asset: TOKEN, amount: NET.toString(), amount_display: "89", clawed_back: NET.toString(), recovered: "0" }),
    ]);
    expect(Date.parse(report.data[0].since)).toBeLessThanOrEqual(s.w.db.clock.now().getTime());
    expect(report.totals).toEqual([{ asset: TOKEN, operators: 1, amount: NET.toString(), amount_display: "89" }]);
    const csv = expectStatus(await receivablesReport("csv"), 200).body as string;
    expect(csv.split("\r\n")[0]).toBe("operator_id,asset,account_id,amount,amount_display,since,clawed_back,recovered");
    expect(csv).toContain(`o,${TOKEN},`);
    // The operator's statement names the clawback; its account history is its own to read.
    const lines = expectStatus(await call("GET", `/v1/operators/o/statement?${wideRange()}`, s.keys.o), 200).body.data;
    expect(lines.map((l: { description: string }) => l.description)).toContain("clawback: paid earnings taken back, owed to the platform");
    expectStatus(await call("GET", `/v1/accounts/${report.data[0].account_id}`, s.keys.o), 200);
    expectStatus(await call("GET", `/v1/accounts/${report.data[0].account_id}`, s.keys.o2), 404);
    // Money credited outside usage (no recovery ran yet): not payable while the operator owes.
    await s.w.credit("o", TOKEN, 10n * USD);
    const refused = expectStatus(await s.payout("o", 10n * USD), 422).body;
    expect(refused).toMatchObject({ code: "payout_withheld", detail: expect.stringContaining("it owes 89 TUSD to the platform") });
    expect(await recoverReceivables(s.w.db)).toBe(1); // the payout worker's pass
    expect(await posted("operator:o:receivable")).toBe(79n * USD);
    // New usage pays it back first: 89 earned, 79 recovered, 10 payable.
    await s.usage("o", "c", 100n * USD);
    expect(await posted("operator:o:receivable")).toBe(0n);
    expect(await s.balance("o")).toMatchObject({ available: (10n * USD).toString(), payable_now: (10n * USD).toString(), receivable: "0" });
    expect(expectStatus(await receivablesReport(), 200).body.data).toEqual([]);
    await paid("o", 10n * USD);
  });

  it("recovery waits for funds: earnings whose money has not been received do not pay back the receivable", async () => {
    s = await fundingWorld();
    await s.settle(100n * USD, "c wire 1", "c");
    const u = await s.usage("o", "c", 100n * USD);
    await paid("o", NET);
    // Unfunded usage (a postpaid customer's) then pads o's payable.
    await s.usage("o", "p", 100n * USD);
    const d = expectStatus(await open([u.id]), 201).body;
    expectStatus(await uphold(d.id), 200);
    // Its unfunded 89 stay on the payable (awaiting funds); the 89 it was paid is owed.
    expect(await posted("operator:o:payable")).toBe(NET);
    expect(await posted("operator:o:receivable")).toBe(NET);
    expect(await s.balance("o")).toMatchObject({ available: NET.toString(), awaiting_funds: NET.toString(), payable_now: "0", receivable: NET.toString() });
    expect(await recoverReceivables(s.w.db)).toBe(0);
    // The marketplace settles for p: the earnings are funded, and go to the receivable before anything is payable.
    await s.settle(100n * USD, "p wire", "p");
    expect(await s.balance("o")).toMatchObject({ available: NET.toString(), awaiting_funds: "0", payable_now: "0", receivable: NET.toString() });
    expect(await recoverReceivables(s.w.db)).toBe(1);
    expect(await posted("operator:o:receivable")).toBe(0n);
    expect(await posted("operator:o:payable")).toBe(0n);
  });

  it("the reverse-usage route: a marketplace cannot claw back paid earnings (it opens a dispute); an admin's is a proposal another key approves", async () => {
    s = await fundingWorld();
    await s.settle(200n * USD, "c wire 1", "c");
    const u1 = await s.usage("o", "c", 100n * USD);
    const u2 = await s.usage("o", "c", 100n * USD);
    await paid("o", 2n * NET);
    const before = await writeCounts(s.w.db);
    const refused = expectStatus(await call("POST", `/v1/usage/${u1.id}/reverse`, s.keys.market, { reason: "meter fault" }), 422).body;
    expect(refused).toMatchObject({ code: "exceeds_credits", detail: expect.stringContaining("open a dispute (POST /v1/disputes)") });
    expect(await writeCounts(s.w.db)).toEqual(before);
    // One admin alone writes nothing but a proposal: its own key cannot approve it, another's can.
    const proposal = expectStatus(await call("POST", `/v1/usage/${u1.id}/reverse`, s.keys.admin2, { reason: "meter fault" }), 202).body;
    expect(proposal).toMatchObject({ kind: "usage_reversal", status: "proposed", payload: { usage_id: u1.id, operator_id: "o", reason: "meter fault" } });
    // Asked again, by another admin key (the bootstrap one) and for another reason, while it is open: the open proposal answers.
    const again = expectStatus(await s.api.call("POST", `/v1/usage/${u1.id}/reverse`, { body: { reason: "meter fault, again" } }), 202).body;
    expect(again.id).toBe(proposal.id);
    expect(await posted("operator:o:receivable")).toBe(0n);
    expect(expectStatus(await call("POST", `/v1/proposals/${proposal.id}/approve`, s.keys.admin2, {}), 403).body.code).toBe("four_eyes");
    // The operator sees it coming.
    expect(expectStatus(await call("GET", `/v1/proposals/${proposal.id}`, s.keys.o), 200).body.status).toBe("proposed");
    const approved = expectStatus(await call("POST", `/v1/proposals/${proposal.id}/approve`, s.keys.finance, {}), 200).body;
    expect(approved).toMatchObject({ status: "approved", result: { reversal_transfer_id: expect.any(String) } });
    expect(await posted("operator:o:receivable")).toBe(NET);
    expect(expectStatus(await call("POST", `/v1/proposals/${proposal.id}/approve`, s.keys.finance2, {}), 409).body.code).toBe("proposal_decided");
    expect(await posted("operator:o:payable")).toBe(0n);
    // A record in an open dispute is decided there: no reversal by hand, whoever asks.
    const d = expectStatus(await open([u2.id]), 201).body;
    for (const key of [s.keys.market, s.keys.admin2]) {
      expect(expectStatus(await call("POST", `/v1/usage/${u2.id}/reverse`, key, { reason: "x" }), 409).body.code).toBe("usage_disputed");
    }
    expectStatus(await uphold(d.id), 200);
    expect(await posted("operator:o:receivable")).toBe(2n * NET);
  });
});

describe("what may not be disputed, and by whom", () => {
  it("a record in an open dispute is not disputed again; a reversed one not at all; another marketplace's is not found; nothing is written", async () => {
    s = await fundingWorld();
    await s.settle(300n * USD, "c wire 1", "c");
    const u1 = await s.usage("o", "c", 100n * USD);
    const u2 = await s.usage("o", "c", 100n * USD);
    const d = expectStatus(await open([u1.id]), 201).body;
    expectStatus(await call("POST", `/v1/usage/${u2.id}/reverse`, s.keys.market, { reason: "wrong customer" }), 201);
    const before = await writeCounts(s.w.db);
    const twice = expectStatus(await open([u1.id]), 409).body;
    expect(twice).toMatchObject({ code: "usage_disputed", detail: `usage record ${u1.id} is in open dispute ${d.id}` });
    expect(expectStatus(await open([u2.id]), 409).body.code).toBe("already_reversed");
    // Marketplace b: m's record, by id or by external id, is answered as a missing one; so is m's dispute.
    expect(expectStatus(await open([u1.id], s.keys.b), 404).body.code).toBe("usage_not_found");
    expectStatus(await call("POST", "/v1/disputes", s.keys.b, { external_ids: [u1.external_id], marketplace_id: "m", reason: "x" }), 404);
    expectStatus(await call("POST", "/v1/disputes", s.keys.b, { external_ids: [u1.external_id], reason: "x" }), 404);
    expect(expectStatus(await call("GET", `/v1/disputes/${d.id}`, s.keys.b), 404).body.code).toBe("dispute_not_found");
    expect(expectStatus(await call("GET", "/v1/disputes", s.keys.b), 200).body.data).toEqual([]);
    // Operators neither open nor decide disputes.
    expectStatus(await open([u1.id], s.keys.o), 403);
    expect(await writeCounts(s.w.db)).toEqual(before);
    // An operator sees the disputes of its own usage, and only those.
    expect(expectStatus(await call("GET", `/v1/disputes/${d.id}`, s.keys.o), 200).body.records).toHaveLength(1);
    expectStatus(await call("GET", `/v1/disputes/${d.id}`, s.keys.o2), 404);
    expect(expectStatus(await call("GET", "/v1/disputes", s.keys.o2), 200).body.data).toEqual([]);
    expect(expectStatus(await call("GET", "/v1/disputes?status=open", s.keys.o), 200).body.data.map((x: { id: string }) => x.id)).toEqual([d.id]);
    // By external id, for the marketplace's own records.
    const u3 = await s.usage("o", "c", 100n * USD);
    const byExternal = expectStatus(await call("POST", "/v1/disputes", s.keys.market, { external_ids: [u3.external_id], reason: "x" }), 201).body;
    expect(byExternal.records[0].usage_id).toBe(u3.id);
  });

  it("the dispute window, set by an admin, judged on the record's booking time by the service's clock", async () => {
    const clock = movableClock();
    s = await fundingWorld({ clock });
    await s.settle(300n * USD, "c wire 1", "c");
    const settings = await call("GET", "/v1/marketplaces/m/dispute-settings", s.keys.market);
    expect(expectStatus(settings, 200).body).toMatchObject({ dispute_window_days: 60, default: true });
    expectStatus(await call("PUT", "/v1/marketplaces/m/dispute-settings", s.keys.market, { dispute_window_days: 365 }), 403);
    expectStatus(await call("GET", "/v1/marketplaces/m/dispute-settings", s.keys.b), 404);
    expectStatus(await call("PUT", "/v1/marketplaces/m/dispute-settings", s.keys.admin2, { dispute_window_days: 30 }), 200);
    const u = await s.usage("o", "c", 100n * USD);
    clock.forward(30 * DAY - 1000);
    const late = await s.usage("o", "c", 100n * USD);
    clock.forward(2000); // u's window closed a second ago; late's is open for 30 more days
    const before = await writeCounts(s.w.db);
    const refused = expectStatus(await open([u.id, late.id]), 422).body;
    expect(refused).toMatchObject({ code: "dispute_window_closed", errors: [{ path: "usage_ids" }] });
    expect(refused.detail).toContain("dispute window of 30 days closed at");
    expect(await writeCounts(s.w.db)).toEqual(before);
    expectStatus(await open([late.id]), 201);
  });
});

describe("the payable's no-overdraft rule still holds on every other path", () => {
  it("no key moves an operator's payable or receivable by hand, and the ledger refuses overdrawing one", async () => {
    s = await fundingWorld();
    await s.settle(100n * USD, "c wire 1", "c");
    const u = await s.usage("o", "c", 100n * USD);
    await paid("o", NET);
    expectStatus(await uphold(expectStatus(await open([u.id]), 201).body.id), 200);
    const asset = (await getAssetByCode(s.w.db, TOKEN))!;
    const payable = chart.operatorPayable(asset.id, "o");
    const receivable = chart.operatorReceivable(asset.id, "o");
    const treasury = chart.treasury(asset.id, "31337");
    const ids = await ensureAccounts(s.w.db, [payable, receivable, treasury]);
    const [p, r, t] = [payable, receivable, treasury].map((a) => ids.get(specKey(a))!) as [string, string, string];
    // Through the API: the service's accounts are not moved by hand, not even by an admin.
    for (const legs of [[{ debit_account_id: p, credit_account_id: t, amount: "1" }], [{ debit_account_id: r, credit_account_id: p, amount: "1" }]]) {
      expectStatus(await call("POST", "/v1/transfers", s.keys.admin2, { legs }), 403);
    }
    // In the ledger itself: the payable is never overdrawn, the receivable never recovered beyond what is owed.
    const [overdraw, overRecover] = await writeTransfers(s.w.db, [
      { kind: "standard", idempotencyKey: "t-overdraw", legs: [{ debitAccountId: p, creditAccountId: t, amount: 1n }] },
      { kind: "standard", idempotencyKey: "t-over-recover", legs: [{ debitAccountId: t, creditAccountId: r, amount: NET + 1n }] },
    ]);
    expect(overdraw).toMatchObject({ ok: false, error: { code: "exceeds_credits" } });
    expect(overRecover).toMatchObject({ ok: false, error: { code: "exceeds_debits" } });
    expect(await posted("operator:o:payable")).toBe(0n);
    expect(await posted("operator:o:receivable")).toBe(NET);
  });
});
