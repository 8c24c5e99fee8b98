import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectStatus, offlineSettlements, testApi, world, writeCounts, writeJournal, type TestApi, type WriteJournal } from "../support/http.js";
import type { World } from "../support/security.js";

/**
 * Generated hostile bodies against every POST route: each answer is a 4xx problem+json and the
 * database is unchanged. Two generators: bodies that are wrong as a whole (not JSON, not an object,
 * unknown fields, deep nesting), and valid bodies with one field replaced by a value of the wrong
 * kind for that field.
 */
let api: TestApi;
let w: World;
let hold: string;
let payout: string;
let journal: WriteJournal;
beforeAll(async () => {
  api = await testApi({ settlements: offlineSettlements() });
  w = await world(api);
  hold = expectStatus(
    await api.call("POST", "/v1/transfers", {
      key: w.keys.m1,
      body: { type: "pending", legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "5" }] },
    }),
    201,
  ).body.id;
  payout = expectStatus(await api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "USDC", amount: "5" } }), 201).body.id;
  // A second asset, for rates between two.
  expectStatus(await api.call("POST", "/v1/assets", { body: { code: "EURC", scale: 6, settlement: { kind: "offchain" } } }), 201);
  // From here on every request is refused: any row written to any table shows in the journal, but
  // the audit log's row of each refused call (docs/api.md, "Audit").
  journal = await writeJournal(api.db, ["audit_log INSERT"]);
  written = await journal.mark();
});
afterAll(async () => api.close());

type Kind =
  | "nullableAmount"
  | "amount"
  | "uuid"
  | "text"
  | "code"
  | "int"
  | "bool"
  | "enum"
  | "metadata"
  | "timestamp"
  | "legs"
  | "decimal"
  | "rate"
  | "records"
  | "rules"
  | "units";

const deep = (n: number): unknown => (n === 0 ? 1 : [deep(n - 1)]);
const sql = ["'; drop table transfers; --", "1 or 1=1", "$1", "\\x00"];
const huge = (1n << 256n).toString();

/** Values that are wrong for a field of this kind. */
const badFor: Record<Kind, fc.Arbitrary<unknown>> = {
  amount: fc.oneof(
    fc.integer(),
    fc.double(),
    fc.constantFrom("1.5", "-1", "0", "", " 1", "1e3", "0x10", "01", huge, "١٢٣", "💸", ...sql),
    fc.constant(null),
    fc.array(fc.nat()),
    fc.string().filter((s) => !/^[1-9][0-9]*$/.test(s)),
  ),
  // An amount where null means "none" (a cap). No NaN or ±Infinity: JSON writes them as null.
  nullableAmount: fc.oneof(
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom("1.5", "-1", "0", "", " 1", "1e3", "0x10", "01", huge, "١٢٣", "💸", ...sql),
    fc.array(fc.nat()),
    fc.string().filter((s) => !/^[1-9][0-9]*$/.test(s)),
  ),
  uuid: fc.oneof(
    fc.string().filter((s) => !/^[0-9a-f-]{36}$/.test(s)),
    fc.integer(),
    fc.constant(null),
    fc.constantFrom(...sql),
  ),
  text: fc.oneof(fc.integer(), fc.constant(null), fc.array(fc.string()), fc.constant("x".repeat(5000)), fc.constant("a\u0000b")),
  code: fc.oneof(fc.constantFrom("", "💸", "UP PER", "x".repeat(200), ...sql), fc.integer(), fc.constant(null)),
  int: fc.oneof(
    fc.double().filter((d) => !Number.isInteger(d)),
    fc.constantFrom(-1, 1e21, "6", null, [], {}),
  ),
  bool: fc.oneof(fc.constantFrom("true", 1, 0, null, [], {})),
  enum: fc.oneof(
    fc
      .string()
      .filter(
        (s) =>
          ![
            "standard",
            "pending",
            "debit",
            "credit",
            "admin",
            "finance",
            "marketplace",
            "operator",
            "erc20",
            "native",
            "offchain",
            "prepaid",
            "postpaid",
          ].includes(s),
      ),
    fc.integer(),
    fc.constant(null),
  ),
  metadata: fc.oneof(
    fc.constantFrom("x", 1, null, [], [1, 2], true),
    fc.constant({ deep: deep(50) }),
    fc.constant({ big: "x".repeat(20_000) }),
    fc.constant({ nul: "a\u0000" }),
  ),
  timestamp: fc.oneof(fc.constantFrom("yesterday", "2026-13-01T00:00:00Z", "2026-01-01", "", 1700000000, null), fc.string()),
  legs: fc.oneof(fc.constantFrom([], "legs", 1, null, {}), fc.array(fc.jsonValue(), { minLength: 1, maxLength: 3 })),
  decimal: fc.oneof(
    fc.integer(),
    fc.double(),
    fc.constantFrom("-1", "1e3", ".5", "5.", "01", "1." + "0".repeat(19), "1".repeat(41), "", "NaN", "∞", ...sql),
    fc.constant(null),
  ),
  // A rate: a positive decimal of up to 30 digits either side of the point.
  rate: fc.oneof(
    fc.integer(),
    fc.double(),
    fc.constantFrom("0", "0.0", "-1", "1e3", ".5", "5.", " 1", "1".repeat(31), "1." + "1".repeat(31), "", "NaN", "∞", ...sql),
    fc.constant(null),
  ),
  // Like amount, but zero is a valid fee amount.
  units: fc.oneof(
    fc.integer(),
    fc.double(),
    fc.constantFrom("1.5", "-1", "", " 1", "1e3", "0x10", "01", huge, "١٢٣", "💸", ...sql),
    fc.constant(null),
    fc.array(fc.nat()),
  ),
  rules: fc.oneof(
    fc.constantFrom("rules", 1, null, {}, [1], [null], [{}], [{ party: "x" }]),
    fc.constant(Array.from({ length: 11 }, (_, i) => ({ party: `p${i}`, bps: 1 }))),
  ),
  records: fc.oneof(fc.constantFrom([], "records", 1, null, {}), fc.constant(Array.from({ length: 10_001 }, () => ({})))),
};

/** An operator's costs of a machine class, per unit (docs/usage.md, "Costs, margin and what-if"). */
const operatorCosts = {
  asset: "USDC",
  power_watts: "700",
  price_per_kwh: "0.12",
  bandwidth_monthly: "20",
  other_monthly: "30",
  purchase_price: "30000",
  depreciation_months: 36,
};

interface PostRoute {
  name: string;
  method?: "PUT" | "PATCH";
  path: () => string;
  key: () => string;
  valid: () => Record<string, unknown>;
  fields: Record<string, Kind>;
}

const legs = () => [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount: "1" }];
const routes: PostRoute[] = [
  {
    name: "POST /v1/api-keys",
    path: () => "/v1/api-keys",
    key: () => w.keys.admin,
    valid: () => ({ name: "k", role: "marketplace", scope_id: "m1" }),
    fields: { name: "text", role: "enum", scope_id: "code" },
  },
  {
    name: "POST /v1/assets",
    path: () => "/v1/assets",
    key: () => w.keys.admin,
    valid: () => ({ code: "FUZZ", scale: 6, settlement: { kind: "offchain" }, rate_max_age_seconds: 600, rate_max_deviation_bps: 50 }),
    fields: { code: "code", scale: "int", settlement: "enum", rate_max_age_seconds: "int", rate_max_deviation_bps: "int" },
  },
  {
    name: "POST /v1/accounts",
    path: () => "/v1/accounts",
    key: () => w.keys.m1,
    valid: () => ({ asset_id: w.asset.id, code: "fuzz", normal_side: "credit", ref: "fuzz", metadata: {} }),
    fields: {
      asset_id: "uuid",
      code: "code",
      normal_side: "enum",
      ref: "text",
      owner_id: "text",
      debits_must_not_exceed_credits: "bool",
      metadata: "metadata",
    },
  },
  {
    name: "POST /v1/transfers",
    path: () => "/v1/transfers",
    key: () => w.keys.m1,
    valid: () => ({ type: "pending", legs: legs(), timeout_seconds: 60, effective_at: "2026-01-01T00:00:00Z", metadata: {} }),
    fields: { type: "enum", legs: "legs", timeout_seconds: "int", effective_at: "timestamp", metadata: "metadata", id: "uuid" },
  },
  {
    name: "POST /v1/transfers (leg fields)",
    path: () => "/v1/transfers",
    key: () => w.keys.m1,
    valid: () => ({ legs: legs() }),
    fields: { "legs.0.amount": "amount", "legs.0.debit_account_id": "uuid", "legs.0.credit_account_id": "uuid" },
  },
  {
    name: "POST /v1/marketplaces",
    path: () => "/v1/marketplaces",
    key: () => w.keys.admin,
    valid: () => ({ id: "fuzz-market", name: "x" }),
    fields: { id: "code", name: "text", metadata: "metadata" },
  },
  {
    name: "POST /v1/marketplaces/{id}/fee-schedules",
    path: () => "/v1/marketplaces/m1/fee-schedules",
    key: () => w.keys.admin,
    valid: () => ({ effective_from: "2031-01-01T00:00:00Z", rules: [{ party: "marketplace", bps: 100, fixed: { USDC: "1" } }] }),
    fields: {
      effective_from: "timestamp",
      rules: "rules",
      "rules.0.party": "code",
      "rules.0.bps": "int",
      "rules.0.fixed": "metadata",
      "rules.0.fixed.USDC": "units",
    },
  },
  {
    name: "POST /v1/operators",
    path: () => "/v1/operators",
    key: () => w.keys.m1,
    valid: () => ({ id: "fuzz-op", name: "x" }),
    fields: { id: "code", name: "text", marketplace_id: "code", metadata: "metadata" },
  },
  {
    name: "PATCH /v1/marketplaces/{id}",
    method: "PATCH",
    path: () => "/v1/marketplaces/m1",
    key: () => w.keys.m1,
    valid: () => ({ name: "x", metadata: { a: "b" } }),
    fields: { name: "text", metadata: "metadata" },
  },
  {
    name: "PATCH /v1/operators/{id}",
    method: "PATCH",
    path: () => "/v1/operators/o1",
    key: () => w.keys.o1,
    valid: () => ({ name: "x", metadata: { a: "b" } }),
    fields: { name: "text", metadata: "metadata" },
  },
  {
    name: "PATCH /v1/customers/{id}",
    method: "PATCH",
    path: () => "/v1/customers/c1",
    key: () => w.keys.m1,
    valid: () => ({ metadata: { a: "b" } }),
    fields: { metadata: "metadata" },
  },
  {
    name: "PATCH /v1/assets/{code}",
    method: "PATCH",
    path: () => "/v1/assets/USDC",
    key: () => w.keys.admin,
    valid: () => ({ settlement: { kind: "erc20", chain_id: 31337, token_address: `0x${"ab".repeat(20)}` } }),
    fields: { "settlement.kind": "enum", "settlement.chain_id": "int", "settlement.token_address": "code" },
  },
  {
    name: "POST /v1/customers",
    path: () => "/v1/customers",
    key: () => w.keys.m1,
    valid: () => ({ id: "fuzz-cust", billing: "prepaid" }),
    fields: { id: "code", billing: "enum", metadata: "metadata" },
  },
  {
    name: "POST /v1/customers (postpaid)",
    path: () => "/v1/customers",
    key: () => w.keys.m1,
    valid: () => ({ id: "fuzz-post", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "1000" }] }),
    fields: { id: "code", "credit_limits.0.asset": "code", "credit_limits.0.credit_limit": "amount", metadata: "metadata" },
  },
  {
    name: "PUT /v1/customers/{id}/credit-limits/{asset}",
    method: "PUT",
    path: () => "/v1/customers/m1only/credit-limits/USDC",
    key: () => w.keys.m1,
    valid: () => ({ credit_limit: "1000000000000000000000000" }),
    fields: { credit_limit: "code" },
  },
  {
    name: "PUT /v1/operators/{id}/payout-limits/{asset}",
    method: "PUT",
    path: () => "/v1/operators/o1/payout-limits/USDC",
    key: () => w.keys.finance,
    valid: () => ({ max_per_payout: "1000", max_per_day: "5000" }),
    // Both are nullable (the policy's cap alone), so null is not a bad value of theirs.
    fields: { max_per_payout: "nullableAmount", max_per_day: "nullableAmount" },
  },
  {
    name: "POST /v1/holds",
    path: () => "/v1/holds",
    key: () => w.keys.m1,
    valid: () => ({ customer_id: "c1", asset: "USDC", amount: "1", timeout_seconds: 600 }),
    fields: { customer_id: "code", asset: "code", amount: "amount", timeout_seconds: "int" },
  },
  {
    name: "POST /v1/usage/{id}/reverse",
    path: () => `/v1/usage/${w.m1Usage.id}/reverse`,
    key: () => w.keys.m1,
    valid: () => ({ reason: "meter fault" }),
    fields: { reason: "text" },
  },
  {
    name: "POST /v1/webhook-endpoints",
    path: () => "/v1/webhook-endpoints",
    key: () => w.keys.m1,
    valid: () => ({ url: "ftp://127.0.0.1/refused-scheme", event_types: ["usage.batch.completed"], description: "hooks" }),
    fields: { url: "text", "event_types.0": "code" },
  },
  {
    name: "PATCH /v1/webhook-endpoints/{id}",
    method: "PATCH",
    path: () => "/v1/webhook-endpoints/01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e",
    key: () => w.keys.m1,
    valid: () => ({ url: "http://127.0.0.1:9/x", event_types: ["usage.batch.completed"], status: "disabled", description: "x" }),
    fields: { url: "text", "event_types.0": "code", status: "enum" },
  },
  {
    name: "POST /v1/webhook-endpoints/{id}/rotate-secret",
    path: () => "/v1/webhook-endpoints/01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e/rotate-secret",
    key: () => w.keys.m1,
    valid: () => ({ overlap_seconds: 60 }),
    fields: { overlap_seconds: "int" },
  },
  {
    name: "POST /v1/balance-monitors",
    path: () => "/v1/balance-monitors",
    key: () => w.keys.m1,
    valid: () => ({ account_id: w.m1Customer.id, direction: "below", balance: "available", threshold: "50000000", hysteresis: "5000000" }),
    // The threshold may be zero or negative: "text" values (not strings, too long, NUL) are never one.
    fields: { account_id: "uuid", direction: "enum", balance: "enum", threshold: "text", hysteresis: "text" },
  },
  {
    name: "POST /v1/disputes",
    path: () => "/v1/disputes",
    key: () => w.keys.m1,
    valid: () => ({ usage_ids: [w.m1Usage.id], reason: "job failed" }),
    fields: { usage_ids: "legs", "usage_ids.0": "uuid", external_ids: "legs", marketplace_id: "code", reason: "text" },
  },
  {
    name: "POST /v1/disputes (by external id)",
    path: () => "/v1/disputes",
    key: () => w.keys.finance,
    valid: () => ({ external_ids: [w.m1Usage.external_id], marketplace_id: "m1", reason: "job failed" }),
    fields: { external_ids: "legs", "external_ids.0": "text", marketplace_id: "code", reason: "text" },
  },
  {
    name: "POST /v1/disputes/{id}/uphold",
    path: () => "/v1/disputes/01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e/uphold",
    key: () => w.keys.finance,
    valid: () => ({ note: "logs confirm it" }),
    fields: { note: "text" },
  },
  {
    name: "POST /v1/disputes/{id}/reject",
    path: () => "/v1/disputes/01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e/reject",
    key: () => w.keys.finance,
    valid: () => ({ note: "the job ran" }),
    fields: { note: "text" },
  },
  {
    name: "PUT /v1/marketplaces/{id}/capacity-policy",
    method: "PUT",
    path: () => "/v1/marketplaces/m1/capacity-policy",
    key: () => w.keys.m1,
    valid: () => ({ default: "refuse", resources: { "gpu:h100": "flag" } }),
    fields: { default: "enum", resources: "metadata" },
  },
  {
    name: "POST /v1/operators/{id}/capacity",
    path: () => "/v1/operators/o1/capacity",
    key: () => w.keys.o1,
    valid: () => ({ resource: "gpu:h100", units: 8, effective_from: "2030-01-01T00:00:00Z", until: "2030-06-01T00:00:00Z" }),
    // until is nullable (no end), so null is not a bad value of it.
    fields: { resource: "code", units: "int", effective_from: "timestamp" },
  },
  {
    name: "PUT /v1/operators/{id}/costs/{resource}",
    method: "PUT",
    path: () => "/v1/operators/o1/costs/gpu:h100",
    key: () => w.keys.o1,
    valid: () => ({ ...operatorCosts }),
    fields: {
      asset: "code",
      power_watts: "decimal",
      price_per_kwh: "decimal",
      bandwidth_monthly: "decimal",
      other_monthly: "decimal",
      purchase_price: "decimal",
      depreciation_months: "int",
    },
  },
  {
    name: "POST /v1/operators/{id}/scenarios",
    path: () => "/v1/operators/o1/scenarios",
    key: () => w.keys.o1,
    valid: () => ({ resource: "gpu:h100", units: 2, weeks: 4, ...operatorCosts }),
    fields: {
      resource: "code",
      units: "int",
      weeks: "int",
      asset: "code",
      power_watts: "decimal",
      price_per_kwh: "decimal",
      bandwidth_monthly: "decimal",
      other_monthly: "decimal",
      purchase_price: "decimal",
      depreciation_months: "int",
    },
  },
  {
    name: "PUT /v1/marketplaces/{id}/dispute-settings",
    method: "PUT",
    path: () => "/v1/marketplaces/m1/dispute-settings",
    key: () => w.keys.admin,
    valid: () => ({ dispute_window_days: 90 }),
    fields: { dispute_window_days: "int" },
  },
  {
    name: "POST /v1/customers/{id}/deposits",
    path: () => "/v1/customers/c1/deposits",
    key: () => w.keys.m1,
    valid: () => ({ asset: "USDC", amount: "1" }),
    fields: { asset: "code", amount: "amount", metadata: "metadata" },
  },
  {
    name: "POST /v1/usage",
    path: () => "/v1/usage",
    key: () => w.keys.m1,
    valid: () => w.usage("fuzz-usage"),
    fields: {
      external_id: "text",
      operator_id: "code",
      customer_id: "code",
      resource: "code",
      unit: "code",
      quantity: "decimal",
      unit_price: "decimal",
      amount: "amount",
      asset: "code",
      period_start: "timestamp",
      period_end: "timestamp",
      metadata: "metadata",
    },
  },
  {
    name: "POST /v1/usage/batch",
    path: () => "/v1/usage/batch",
    key: () => w.keys.m1,
    valid: () => ({ records: [w.usage("fuzz-batch")], atomic: true }),
    fields: { records: "records", atomic: "bool", marketplace_id: "int" },
  },
  {
    name: "POST /v1/transfers/{id}/post",
    path: () => `/v1/transfers/${hold}/post`,
    key: () => w.keys.m1,
    valid: () => ({ amount: "1", metadata: {} }),
    fields: { amount: "amount", effective_at: "timestamp", metadata: "metadata" },
  },
  {
    name: "POST /v1/transfers/{id}/void",
    path: () => `/v1/transfers/${hold}/void`,
    key: () => w.keys.m1,
    valid: () => ({ metadata: {} }),
    fields: { metadata: "metadata" },
  },
  {
    name: "POST /v1/transfers/{id}/reverse",
    path: () => `/v1/transfers/${w.fund.id}/reverse`,
    key: () => w.keys.m1,
    valid: () => ({ metadata: {} }),
    fields: { metadata: "metadata", effective_at: "timestamp" },
  },
  {
    name: "POST /v1/payouts",
    path: () => "/v1/payouts",
    key: () => w.keys.finance,
    valid: () => ({ operator_id: "o1", asset: "USDC", amount: "1" }),
    fields: { operator_id: "code", asset: "code", amount: "amount" },
  },
  {
    name: "POST /v1/payouts/{id}/mark-paid",
    path: () => `/v1/payouts/${payout}/mark-paid`,
    key: () => w.keys.finance,
    valid: () => ({ reference: "wire-7" }),
    fields: { reference: "text" },
  },
  {
    name: "POST /v1/operators/{id}/payout-address-challenges",
    path: () => "/v1/operators/o1/payout-address-challenges",
    key: () => w.keys.o1,
    valid: () => ({ chain_id: 31337, address: `0x${"ab".repeat(20)}` }),
    fields: { chain_id: "int", address: "code" },
  },
  {
    name: "PUT /v1/operators/{id}/payout-address",
    method: "PUT",
    path: () => "/v1/operators/o1/payout-address",
    key: () => w.keys.o1,
    valid: () => ({
      chain_id: 31337,
      address: `0x${"ab".repeat(20)}`,
      challenge_id: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e",
      signature: `0x${"cd".repeat(65)}`,
    }),
    fields: { chain_id: "int", address: "code", challenge_id: "uuid", signature: "code" },
  },
  {
    name: "POST /v1/reconciliations",
    path: () => "/v1/reconciliations",
    key: () => w.keys.finance,
    valid: () => ({ chain_id: 31337, asset: "USDC", from_block: 0, to_block: 10 }),
    fields: { chain_id: "int", asset: "code", from_block: "int", to_block: "int" },
  },
  {
    name: "POST /v1/reconciliations/{id}/items/{item_id}/resolve",
    path: () => "/v1/reconciliations/01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e/items/1/resolve",
    key: () => w.keys.finance,
    valid: () => ({ note: "n", adjustment: { debit_account_id: w.m1Funding.id, credit_account_id: w.m1Customer.id, amount: "1" } }),
    fields: { note: "text", adjustment: "legs", "adjustment.debit_account_id": "uuid", "adjustment.amount": "amount" },
  },
  {
    name: "POST /v1/customers/{id}/deposit-addresses",
    path: () => "/v1/customers/c1/deposit-addresses",
    key: () => w.keys.m1,
    valid: () => ({ chain_id: 31337, address: `0x${"ab".repeat(20)}`, signature: `0x${"1b".repeat(65)}` }),
    fields: { chain_id: "int", address: "code", signature: "code", marketplace_id: "int" },
  },
  {
    name: "PUT /v1/marketplaces/{id}/usage-limits/{asset}",
    method: "PUT",
    path: () => "/v1/marketplaces/m1/usage-limits/USDC",
    key: () => w.keys.admin,
    valid: () => ({ max_gross_per_record: "1000000000", max_quantity_per_second: { gpu_hour: "30" } }),
    // Both fields are nullable (back to the default), so null is not a bad value of theirs.
    fields: { max_quantity_per_second: "metadata" },
  },
  {
    name: "POST /v1/marketplaces/{id}/receipts",
    path: () => "/v1/marketplaces/m1/receipts",
    key: () => w.keys.finance,
    valid: () => ({ asset: "USDC", amount: "1", reference: "fuzz wire", customer_id: "c1" }),
    fields: { asset: "code", amount: "amount", reference: "text", customer_id: "code" },
  },
  {
    name: "POST /v1/marketplaces/{id}/credit-limits",
    path: () => "/v1/marketplaces/m1/credit-limits",
    key: () => w.keys.admin,
    valid: () => ({ asset: "USDC", credit_limit: "1" }),
    fields: { asset: "code", credit_limit: "code" },
  },
  {
    name: "POST /v1/proposals/{id}/reject",
    path: () => "/v1/proposals/01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e/reject",
    key: () => w.keys.finance,
    valid: () => ({ reason: "no such wire" }),
    fields: { reason: "text" },
  },
  {
    name: "POST /v1/proposals/{id}/approve",
    path: () => "/v1/proposals/01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e/approve",
    key: () => w.keys.finance,
    valid: () => ({ reason: "seen on the statement" }),
    fields: { reason: "text" },
  },
  {
    name: "PUT /v1/operators/{id}/payout-preferences/{asset}",
    method: "PUT",
    path: () => "/v1/operators/o1/payout-preferences/USDC",
    key: () => w.keys.o1,
    valid: () => ({ splits: [{ asset: "USDC", bps: 10_000 }] }),
    fields: { splits: "rules", "splits.0.asset": "code", "splits.0.bps": "int" },
  },
  {
    name: "POST /v1/rates",
    path: () => "/v1/rates",
    key: () => w.keys.finance,
    valid: () => ({ base: "USDC", quote: "EURC", value: "1.08", observed_at: new Date(Date.UTC(2020, 0, 1)).toISOString(), reference: "fuzz" }),
    fields: { base: "code", quote: "code", value: "rate", observed_at: "timestamp", reference: "text" },
  },
  {
    name: "PUT /v1/marketplaces/{id}/pricing-currency",
    method: "PUT",
    path: () => "/v1/marketplaces/m1/pricing-currency",
    key: () => w.keys.admin,
    valid: () => ({ asset: "USDC", rate_policy: "at_earning" }),
    fields: { asset: "code", rate_policy: "enum" },
  },
  {
    name: "PUT /v1/marketplaces/{id}/periods/{period}",
    method: "PUT",
    path: () => "/v1/marketplaces/m1/periods/2020-01",
    key: () => w.keys.finance,
    valid: () => ({ status: "closing" }),
    fields: { status: "enum" },
  },
  {
    name: "PUT /v1/marketplaces/{id}/time-zone",
    method: "PUT",
    path: () => "/v1/marketplaces/m1/time-zone",
    key: () => w.keys.admin,
    valid: () => ({ time_zone: "UTC" }),
    fields: { time_zone: "text" },
  },
  {
    name: "PUT /v1/payout-policies/{asset}",
    method: "PUT",
    path: () => "/v1/payout-policies/USDC",
    key: () => w.keys.admin,
    valid: () => ({ min_amount: "1", schedule: "interval", interval_seconds: 3600, max_gas_share_bps: 100 }),
    // max_gas_share_bps is nullable (no cap): its bad values are in payouts.error.test.ts.
    fields: { min_amount: "amount", schedule: "enum", interval_seconds: "int" },
  },
  {
    name: "PUT /v1/assets/{code}/rate-bounds",
    method: "PUT",
    path: () => "/v1/assets/USDC/rate-bounds",
    key: () => w.keys.admin,
    valid: () => ({ rate_max_age_seconds: 900, rate_max_deviation_bps: 50 }),
    fields: { rate_max_age_seconds: "int", rate_max_deviation_bps: "int" },
  },
];

/** Sets a dotted path in a copy of the body. */
function withField(body: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(body);
  const parts = path.split(".");
  let node: any = copy; // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const p of parts.slice(0, -1)) node = node[p];
  node[parts[parts.length - 1]!] = value;
  return copy;
}

const wholeBodies = fc.oneof(
  fc.string().map((raw) => ({ raw })),
  fc
    .jsonValue()
    .filter((v) => v === null || typeof v !== "object" || Array.isArray(v))
    .map((v) => ({ raw: JSON.stringify(v) })),
  fc
    .dictionary(
      fc.string({ minLength: 1 }).map((k) => "x_" + k),
      fc.jsonValue(),
      { minKeys: 1, maxKeys: 4 },
    )
    .map((body) => ({ extra: body })),
  fc.constantFrom('{"a":', "[".repeat(20_000), '{"legs": [' + "{".repeat(5000), "\u0000").map((raw) => ({ raw })),
);

/** The journal's length after the last refused request: nothing may be added to it by the next one. */
let written = 0;

async function expectRefusedWithoutWrites(route: PostRoute, send: { raw?: string; body?: unknown; headers?: Record<string, string> }) {
  const res = await api.call(route.method ?? "POST", route.path(), { key: route.key(), ...send });
  expect(res.status, `${route.name} ${JSON.stringify(send).slice(0, 300)} -> ${JSON.stringify(res.body).slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(res.status, `${route.name} ${JSON.stringify(send).slice(0, 300)}`).toBeLessThan(500);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(await journal.since(written), `${route.name} ${JSON.stringify(send).slice(0, 300)} wrote`).toEqual([]);
}

describe("hostile bodies on every POST, PUT and PATCH route", () => {
  for (const route of routes) {
    it(`${route.name}: wrong as a whole`, async () => {
      await fc.assert(
        fc.asyncProperty(wholeBodies, async (b) => {
          if ("extra" in b) await expectRefusedWithoutWrites(route, { body: { ...route.valid(), ...b.extra } });
          else await expectRefusedWithoutWrites(route, { raw: b.raw });
        }),
        { numRuns: 40 },
      );
    });

    it(`${route.name}: one field of the wrong kind`, async () => {
      const fields = Object.entries(route.fields);
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...fields).chain(([path, kind]) => badFor[kind].map((value) => ({ path, value }))),
          async ({ path, value }) => expectRefusedWithoutWrites(route, { body: withField(route.valid(), path, value) }),
        ),
        { numRuns: 60 },
      );
    });

    it(`${route.name}: wrong content types`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("text/plain", "application/xml", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "application/jsonx"),
          async (type) => expectRefusedWithoutWrites(route, { raw: JSON.stringify(route.valid()), headers: { "content-type": type } }),
        ),
        { numRuns: 5 },
      );
    });
  }
});

/** Every string in a body (field values and array items), by its dotted path. */
function stringPaths(value: unknown, path = ""): string[] {
  if (typeof value === "string") return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringPaths(v, path === "" ? String(i) : `${path}.${i}`));
  if (value !== null && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => stringPaths(v, path === "" ? k : `${path}.${k}`));
  return [];
}

describe("a NUL character in any string of any body", () => {
  // Routes that take no fields (NoBody, src/http/routes/common.ts) have no string to put a NUL in:
  // tests/http/no-body-routes.test.ts refuses every body they do not take.
  it("the table above covers every POST, PUT and PATCH route of the OpenAPI document that takes a JSON body with fields", async () => {
    const doc = (await api.call("GET", "/openapi.json", { key: null })).body as {
      paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> } }>>;
    };
    const withBody = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([method, op]) => {
          const json = op.requestBody?.content?.["application/json"];
          return ["post", "put", "patch"].includes(method) && json !== undefined && json.schema?.$ref !== "#/components/schemas/NoBody";
        })
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    const covered = new Set(routes.map((r) => r.name.replace(/ \(.*\)$/, "")));
    expect(withBody.filter((r) => !covered.has(r)).sort()).toEqual([]);
  });

  for (const route of routes) {
    it(`${route.name}: is a 400 naming the field, and nothing is written`, async () => {
      for (const path of stringPaths(route.valid())) {
        const body = withField(route.valid(), path, `${String(path.split(".").reduce((n: any, p) => n[p], route.valid()))}\u0000x`); // eslint-disable-line @typescript-eslint/no-explicit-any
        const res = await api.call(route.method ?? "POST", route.path(), { key: route.key(), body });
        expect(res.status, `${route.name} ${path}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.body.errors, `${route.name} ${path}`).toEqual([{ path, message: expect.stringContaining("NUL") }]);
        expect(await journal.since(written), `${route.name} ${path} wrote`).toEqual([]);
      }
    });
  }
});

describe("the journal of writes the checks above read", () => {
  it("notes a write, an update that changes no count, and nothing for a read, and agrees with the counts of every table", async () => {
    // Every request above was refused: the journal is as long as when it was installed, and so are the tables.
    expect(await journal.since(written)).toEqual([]);
    const counts = await writeCounts(api.db);
    expect((await api.call("GET", "/v1/assets", { key: w.keys.admin })).status).toBe(200);
    expect(await journal.since(written)).toEqual([]);
    expect(await writeCounts(api.db)).toEqual(counts);
    expectStatus(await api.call("POST", "/v1/assets", { body: { code: "JRNL", scale: 2, settlement: { kind: "offchain" } } }), 201);
    expect(await journal.since(written)).toContain("assets INSERT");
    const mark = await journal.mark();
    await api.db.query("update marketplaces set name = name where id = 'm1'");
    expect(await journal.since(mark)).toEqual(["marketplaces UPDATE"]);
  });
});
