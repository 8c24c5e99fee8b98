import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageMonth, wideRange } from "../support/clock.js";
import { expectStatus, testApi, world, type TestApi } from "../support/http.js";
import type { World } from "../support/security.js";

let api: TestApi;
let w: World;
beforeAll(async () => {
  api = await testApi();
  w = await world(api);
});
afterAll(async () => api.close());

const get = async (path: string, key = w.keys.admin) => expectStatus(await api.call("GET", path, { key }), 200).body;
const operatorAvailable = async () => {
  const { data, error, response } = await api.client(w.keys.o1).GET("/v1/operators/{id}/balances", { params: { path: { id: "o1" } } });
  if (!data) throw new Error(`expected 200, got ${response.status}: ${JSON.stringify(error)}`);
  return data.data[0]!.available;
};
const customerBalance = async (customer = "c1") => {
  const accounts = await api.db.query<{ id: string }>("select id from accounts where marketplace_id = 'm1' and ref = $1", [`customer:${customer}`]);
  return (await get(`/v1/accounts/${accounts[0]!.id}/balance`)).posted as string;
};

describe("usage over HTTP", () => {
  it("posts a record: rated, split, and idempotent on external_id", async () => {
    const before = BigInt(await operatorAvailable());
    const res = expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("h-1", { metadata: { job: "j-1" } }) }), 201);
    expect(res.body).toMatchObject({
      external_id: "h-1",
      marketplace_id: "m1",
      operator_id: "o1",
      gross: "2498400",
      gross_display: "2.4984",
      net: "2223576",
      net_display: "2.223576",
      status: "posted",
      metadata: { job: "j-1" },
      fees: [
        { party: "marketplace", amount: "249840", amount_display: "0.24984" },
        { party: "protocol", amount: "24984", amount_display: "0.024984" },
      ],
    });
    expect(BigInt(await operatorAvailable())).toBe(before + 2_223_576n);
    // The same record again, under a new Idempotency-Key: the original, with 200.
    const again = expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("h-1", { metadata: { job: "j-1" } }) }), 200);
    expect(again.body).toEqual(res.body);
    // The read is the write's answer, display twins included.
    expect(await get(`/v1/usage/${res.body.id}`, w.keys.o1)).toEqual(res.body);
  });

  it("takes a batch with one result per record and a summary: compact by default, full when asked", async () => {
    const records = [
      w.usage("b-1"),
      w.usage("h-1", { metadata: { job: "j-1" } }),
      w.usage("b-2", { operator_id: "o2" }),
      { external_id: "b-3" },
      w.usage("b-4", { amount: "5000000", unit_price: undefined }),
    ];
    const res = expectStatus(await api.call("POST", "/v1/usage/batch", { key: w.keys.m1, body: { records } }), 200).body;
    expect(res.summary).toEqual({ accepted: 2, duplicate: 1, rejected: 2 });
    expect(res.results).toEqual([
      { index: 0, status: "accepted", external_id: "b-1", id: expect.any(String) },
      { index: 1, status: "duplicate", external_id: "h-1", id: expect.any(String) },
      { index: 2, status: "rejected", external_id: "b-2", code: "operator_not_found", field: "operator_id" },
      { index: 3, status: "rejected", external_id: "b-3", code: "invalid_request", field: expect.any(String) },
      { index: 4, status: "accepted", external_id: "b-4", id: expect.any(String) },
    ]);
    // The same batch again, in full: the records, and the whole problems.
    const full = expectStatus(await api.call("POST", "/v1/usage/batch", { key: w.keys.m1, body: { records, results: "full" } }), 200).body;
    expect(full.results.map((r: { status: string; error?: { code: string } }) => r.error?.code ?? r.status)).toEqual([
      "duplicate",
      "duplicate",
      "operator_not_found",
      "invalid_request",
      "duplicate",
    ]);
    expect(full.results[3].error.errors.map((e: { path: string }) => e.path)).toContain("operator_id");
    expect(full.results[0].record).toMatchObject({ id: res.results[0].id, external_id: "b-1", gross: expect.any(String) });
    const list = await get("/v1/usage?operator_id=o1&limit=1000", w.keys.m1);
    expect(list.data.map((u: { external_id: string }) => u.external_id)).toEqual(expect.arrayContaining(["b-1", "b-4", "h-1"]));
  });

  it("reverses a record and every balance it moved comes back", async () => {
    const [op0, cust0] = [await operatorAvailable(), await customerBalance()];
    const u = expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("r-1") }), 201).body;
    expect(BigInt(await customerBalance())).toBe(BigInt(cust0) - 2_498_400n);
    const rev = expectStatus(await api.call("POST", `/v1/usage/${u.id}/reverse`, { key: w.keys.m1, body: { reason: "duplicate meter reading" } }), 201).body;
    expect(rev.record).toMatchObject({ id: u.id, status: "reversed" });
    expect(await operatorAvailable()).toBe(op0);
    expect(await customerBalance()).toBe(cust0);
    const t = await get(`/v1/transfers/${rev.reversal_transfer_id}`);
    expect(t).toMatchObject({ type: "reversal", reverses_id: u.transfer_id, metadata: { usage_reversal: { reason: "duplicate meter reading" } } });
  });

  it("charges usage to a hold and returns the rest when the hold is closed", async () => {
    const cust0 = BigInt(await customerBalance());
    const hold = expectStatus(await api.call("POST", "/v1/holds", { key: w.keys.m1, body: { customer_id: "c1", asset: "USDC", amount: "5000000" } }), 201).body;
    expect(hold).toMatchObject({ status: "open", amount: "5000000", remaining: "5000000" });
    expect(BigInt(await customerBalance())).toBe(cust0 - 5_000_000n);
    expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("hold-1", { hold_id: hold.id }) }), 201);
    expect((await get(`/v1/holds/${hold.id}`, w.keys.m1)).remaining).toBe(String(5_000_000 - 2_498_400));
    // More than is left in the hold is refused, not taken from the customer's balance.
    const over = await api.call("POST", "/v1/usage", {
      key: w.keys.m1,
      body: w.usage("hold-2", { hold_id: hold.id, amount: "3000000", unit_price: undefined }),
    });
    expect(over.status).toBe(422);
    const closed = expectStatus(await api.call("POST", `/v1/holds/${hold.id}/close`, { key: w.keys.m1 }), 200).body;
    expect(closed).toMatchObject({ status: "closed", remaining: "0" });
    expect(BigInt(await customerBalance())).toBe(cust0 - 2_498_400n);
    const late = await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("hold-3", { hold_id: hold.id }) });
    expect(late.body.code).toBe("hold_closed");
  });

  it("shows the operator its balances, statement (JSON and CSV) and earnings", async () => {
    const balances = await get("/v1/operators/o1/balances", w.keys.o1);
    expect(balances.data).toEqual([expect.objectContaining({ asset: "USDC", pending: "0", in_transit: "0", paid_out: "0" })]);
    expect(BigInt(balances.data[0].lifetime_earned)).toBe(BigInt(balances.data[0].available)); // nothing paid out yet
    const range = wideRange();
    const statement = await get(`/v1/operators/o1/statement?${range}`, w.keys.o1);
    const last = statement.data[statement.data.length - 1];
    expect(last.balance_after).toBe(balances.data[0].available);
    expect(statement.data.some((l: { amount: string }) => l.amount.startsWith("-"))).toBe(true); // the reversal
    const csv = await api.call("GET", `/v1/operators/o1/statement?${range}&format=csv`, { key: w.keys.o1 });
    expect(csv.headers.get("content-type")).toMatch(/text\/csv/);
    const rows = (csv.body as string).trim().split("\r\n");
    expect(rows[0]).toBe(
      "entry_id,asset,transfer_id,description,amount,balance_after,effective_at,booked_at,payout_id,tx_hash,external_reference,amount_display,balance_after_display",
    );
    expect(rows.length).toBe(statement.data.length + 1);
    const earnings = await get(`/v1/operators/o1/earnings?${range}&group_by=resource`, w.keys.o1);
    const earningsCsv = await api.call("GET", `/v1/operators/o1/earnings?${range}&group_by=resource&format=csv`, { key: w.keys.o1 });
    expect(earningsCsv.headers.get("content-type")).toMatch(/text\/csv/);
    const earningsRows = (earningsCsv.body as string).trim().split("\r\n");
    expect(earningsRows[0]).toBe(
      "group,asset,asset_id,unit,records,quantity,paid_hours,gross,fees,net,effective_rate_per_hour,effective_rate_per_unit," +
        "gross_display,fees_display,net_display,effective_rate_per_hour_units,effective_rate_per_unit_units," +
        "resource,available_unit_hours,utilisation,net_per_available_unit_hour,net_per_available_unit_hour_units",
    );
    expect(earningsRows.slice(1)).toEqual(
      earnings.data.map((r: Record<string, string | number | null>) =>
        [
          r.group,
          r.asset,
          r.asset_id,
          r.unit,
          r.records,
          r.quantity,
          r.paid_hours,
          r.gross,
          r.fees,
          r.net,
          r.effective_rate_per_hour,
          r.effective_rate_per_unit,
          r.gross_display,
          r.fees_display,
          r.net_display,
          r.effective_rate_per_hour_units,
          r.effective_rate_per_unit_units,
          r.resource,
          r.available_unit_hours,
          r.utilisation,
          r.net_per_available_unit_hour,
          r.net_per_available_unit_hour_units,
        ]
          .map((v) => (v === null ? "" : String(v)))
          .join(","),
      ),
    );
    const h100 = earnings.data.find((r: { group: string; unit: string }) => r.group === "gpu:h100-80gb" && r.unit === "gpu_second");
    expect(h100).toBeDefined();
    expect(BigInt(h100.gross) - BigInt(h100.fees)).toBe(BigInt(h100.net));
    // every record here ran 3,600 GPU-seconds (1 hour) for 2.2235760 USDC net, except the amount-priced ones
    expect(Number(h100.paid_hours)).toBe(Number(h100.quantity) / 3600);
    expect(h100.effective_rate_per_hour).toMatch(/^\d+\.\d{1,6}$/);
    const byDay = await get(`/v1/operators/o1/earnings?${range}&group_by=day`, w.keys.o1);
    expect(byDay.data[0].group).toBe(usageMonth.day().toISOString().slice(0, 10));
  });
});
