import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { afterAll, beforeAll, expect } from "vitest";
import { generatePrivateKey } from "viem/accounts";
import { createLedgerClient, type LedgerClient } from "../../clients/typescript/index.js";
import { loadChains } from "../../src/chain/config.js";
import { Settlements } from "../../src/chain/settlement.js";
import { createApp } from "../../src/http/app.js";
import type { AppEnv } from "../../src/http/request-context.js";
import { createMetrics } from "../../src/http/metrics.js";
import type { RateLimiter } from "../../src/http/rate-limit.js";
import { createLogger } from "../../src/log.js";
import { closeLedgerContext, createLedgerContext, type LedgerContext } from "../../src/services/context.js";
import { usageMonth } from "./clock.js";
import { freshDatabase, type TestDatabase } from "./db.js";

export const ADMIN_KEY = "test-admin-key-0123456789abcdef";
/** The key sealing webhook secrets in tests (the worker of a test must use the same). */
export const TEST_WEBHOOK_KEY = Buffer.alloc(32, 7);

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  /** Raw body text, sent as is. */
  raw?: string;
  idempotencyKey?: string | null;
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** The real app on a fresh real database, called in-process (no socket). */
export interface TestApi {
  app: OpenAPIHono<AppEnv>;
  db: TestDatabase;
  ledger: LedgerContext;
  call(method: string, path: string, options?: CallOptions): Promise<ApiResponse>;
  /** The typed client (clients/typescript) with this key (the admin key by default), on the same in-process app. */
  client(key?: string): LedgerClient;
  close(): Promise<void>;
}

export async function testApi(
  options: {
    db?: TestDatabase;
    settlements?: Settlements;
    rateLimiter?: RateLimiter;
    surface?: "all" | "public" | "management";
    webhooks?: { secretsKey: Buffer; allowPrivate: boolean };
    /** Settings beside the tests' defaults (e.g. BATCH_BODIES_IN_FLIGHT_BYTES, BODY_READ_TIMEOUT_MS). */
    config?: { BATCH_BODIES_IN_FLIGHT_BYTES?: number; BODY_READ_TIMEOUT_MS?: number };
  } = {},
): Promise<TestApi> {
  const db = options.db ?? (await freshDatabase());
  const ledger = createLedgerContext(db);
  const app = createApp({
    ledger,
    settlements: options.settlements ?? new Settlements([]),
    rateLimiter: options.rateLimiter,
    surface: options.surface,
    config: { ADMIN_API_KEY: ADMIN_KEY, MAX_BODY_BYTES: 1_048_576, MAX_BATCH_BODY_BYTES: 16_777_216, BODY_READ_TIMEOUT_MS: 60_000, ...options.config },
    log: createLogger("silent"),
    metrics: createMetrics(db),
    // Webhook receivers in tests listen on loopback: private addresses allowed (tests of the refusals make their own app).
    webhooks: options.webhooks ?? { secretsKey: TEST_WEBHOOK_KEY, allowPrivate: true },
  });
  return {
    app,
    db,
    ledger,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      const key = options.key === undefined ? ADMIN_KEY : options.key;
      if (key !== null) headers.authorization = `Bearer ${key}`;
      let body: string | undefined;
      if (options.raw !== undefined) body = options.raw;
      else if (options.body !== undefined) body = JSON.stringify(options.body);
      if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
      // As an HTTP client does: the body's length (a batch without one is admitted as the largest body).
      if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-length"))
        headers["content-length"] = String(Buffer.byteLength(body));
      if ((method === "POST" || method === "PATCH") && options.idempotencyKey !== null) headers["idempotency-key"] = options.idempotencyKey ?? randomUUID();
      const res = await app.request(path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
    client(key = ADMIN_KEY) {
      return createLedgerClient({ baseUrl: "http://localhost", apiKey: key, fetch: async (request) => app.fetch(request) });
    },
    async close() {
      await closeLedgerContext(ledger);
      if (!options.db) await db.destroy();
    },
  };
}

/**
 * Settlements with the local test chain (31337) configured but unreachable: enough for routes that
 * only need to know the chain (payout addresses), with no node behind it.
 */
export function offlineSettlements(): Settlements {
  return new Settlements(
    loadChains(
      {
        CHAINS: JSON.stringify([
          {
            name: "offline",
            chain_id: 31337,
            rpc_urls: ["http://127.0.0.1:9"],
            signer_key_env: "K",
            vault: `0x${"11".repeat(20)}`,
            native_asset: { code: "ETH" },
          },
        ]),
      },
      { K: generatePrivateKey() },
    ),
  );
}

/** Fails with the response body when the status is not the expected one. */
export function expectStatus(res: ApiResponse, status: number): ApiResponse {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res;
}

/**
 * A small world: keys of every role for two tenants, one asset, accounts in marketplaces m1 and m2
 * (m1's customer funded with 1,000,000 units), an operator account of o1, and a posted transfer in m1.
 */
export async function world(api: TestApi) {
  // Tenants exist before their keys: a key can only be scoped to an existing marketplace or operator.
  for (const [m, o] of [
    ["m1", "o1"],
    ["m2", "o2"],
  ] as const) {
    expectStatus(await api.call("POST", "/v1/marketplaces", { body: { id: m, name: `market ${m}` } }), 201);
    expectStatus(await api.call("POST", "/v1/operators", { body: { id: o, name: `operator ${o}`, marketplace_id: m } }), 201);
  }
  const key = async (role: string, scope_id?: string) =>
    expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: `${role} ${scope_id ?? ""}`, role, scope_id } }), 201).body.secret as string;
  const keys = {
    // A person's admin key (the bootstrap key takes part in no four-eyes decision).
    admin: await key("admin"),
    finance: await key("finance"),
    m1: await key("marketplace", "m1"),
    m2: await key("marketplace", "m2"),
    o1: await key("operator", "o1"),
    o2: await key("operator", "o2"),
  };
  const asset = expectStatus(await api.call("POST", "/v1/assets", { body: { code: "USDC", scale: 6, settlement: { kind: "offchain" } } }), 201).body;
  const account = async (key: string, body: Record<string, unknown>) =>
    expectStatus(await api.call("POST", "/v1/accounts", { key, body: { asset_id: asset.id, normal_side: "credit", ...body } }), 201).body;
  const m1Funding = await account(keys.m1, { code: "funding", normal_side: "debit", ref: "funding" });
  // Accounts a marketplace opens for itself (the service's own refs, customer:… and the like, are reserved).
  const m1Customer = await account(keys.m1, { code: "customer_wallet", ref: "wallet:c1", debits_must_not_exceed_credits: true });
  const m1Fees = await account(keys.m1, { code: "marketplace_fees", ref: "fees" });
  const m2Customer = await account(keys.m2, { code: "customer_wallet", ref: "wallet:c1", debits_must_not_exceed_credits: true });
  const fund = expectStatus(
    await api.call("POST", "/v1/transfers", {
      key: keys.m1,
      body: { legs: [{ debit_account_id: m1Funding.id, credit_account_id: m1Customer.id, amount: "1000000" }] },
    }),
    201,
  ).body;

  // Usage: marketplaces m1 and m2 with fee schedules, o1 selling through m1 and o2 through m2,
  // a prepaid customer "c1" in each (funded with 100 USDC) and "m1only" in m1.
  for (const m of ["m1", "m2"] as const) {
    expectStatus(
      await api.call("POST", `/v1/marketplaces/${m}/fee-schedules`, {
        body: {
          effective_from: "2020-01-01T00:00:00Z",
          rules: [
            { party: "marketplace", bps: 1000 },
            { party: "protocol", bps: 100 },
          ],
        },
      }),
      201,
    );
    expectStatus(await api.call("POST", "/v1/customers", { key: keys[m], body: { id: "c1", billing: "prepaid" } }), 201);
    expectStatus(await api.call("POST", "/v1/customers/c1/deposits", { key: keys[m], body: { asset: "USDC", amount: "100000000" } }), 201);
    // The marketplace hands over the deposit it claimed: finance records it, another key approves.
    const receipt = expectStatus(
      await api.call("POST", `/v1/marketplaces/${m}/receipts`, {
        key: keys.finance,
        body: { asset: "USDC", amount: "100000000", reference: `world settlement ${m}` },
      }),
      201,
    ).body;
    expectStatus(await api.call("POST", `/v1/proposals/${receipt.id}/approve`, { key: keys.admin, body: {} }), 200);
  }
  expectStatus(
    await api.call("POST", "/v1/customers", {
      key: keys.m1,
      body: { id: "m1only", billing: "postpaid", credit_limits: [{ asset: "USDC", credit_limit: "1000000000000000000000000" }] },
    }),
    201,
  );
  const usage = (externalId: string, extra: Record<string, unknown> = {}) => ({
    external_id: externalId,
    operator_id: "o1",
    customer_id: "c1",
    resource: "gpu:h100-80gb",
    unit: "gpu_second",
    quantity: "3600",
    unit_price: "0.000694",
    asset: "USDC",
    period_start: usageMonth.day(10).toISOString(),
    period_end: usageMonth.day(11).toISOString(),
    ...extra,
  });
  const m1Usage = expectStatus(await api.call("POST", "/v1/usage", { key: keys.m1, body: usage("world-1") }), 201).body;
  // o1's payable is the service's: opened by its first usage.
  const [payable] = await api.db.query<{ id: string }>(
    "select id from accounts where marketplace_id is null and ref = 'operator:o1:payable' and opened_by_service",
  );
  const o1Payable = expectStatus(await api.call("GET", `/v1/accounts/${payable!.id}`), 200).body;
  return { keys, asset, m1Funding, m1Customer, m1Fees, m2Customer, o1Payable, fund, usage, m1Usage };
}

/**
 * A journal of every row written from now on to any table of the database: a trigger on each table
 * notes the table and the operation in a row of the journal, in the writing transaction (a write
 * that is rolled back leaves no note). Stricter than writeCounts (an update that changes no count
 * shows too, and so does a table writeCounts does not list) and much cheaper to read (one count of
 * a small table instead of about seventy): for tests that send many refused requests in a row.
 */
export interface WriteJournal {
  /** Where the journal ends now. */
  mark(): Promise<number>;
  /** What was written after a mark, as "table OPERATION" per row, oldest first, less what the journal ignores. */
  since(mark: number): Promise<string[]>;
}

/**
 * Installs the journal. `ignore` lists writes that are not the request's effect, as "table
 * OPERATION" (the audit log's row of a refused call: "audit_log INSERT").
 */
export async function writeJournal(db: TestDatabase, ignore: string[] = []): Promise<WriteJournal> {
  await db.query(`create table test_write_journal (n bigint generated always as identity primary key, written text not null)`);
  await db.query(`create function test_write_journal_note() returns trigger language plpgsql as $$
    begin insert into test_write_journal (written) values (tg_table_name || ' ' || tg_op); return null; end $$`);
  await db.query(`do $$
    declare t regclass;
    begin
      for t in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
               where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg_toast%'
                 and c.relkind in ('r', 'p') and not c.relispartition and c.relname <> 'test_write_journal'
      loop
        execute format('create trigger test_write_journal after insert or update or delete on %s for each row execute function test_write_journal_note()', t);
        execute format('create trigger test_write_journal_truncate after truncate on %s for each statement execute function test_write_journal_note()', t);
      end loop;
    end $$`);
  return {
    mark: async () => Number((await db.query<{ n: string }>("select coalesce(max(n), 0)::text as n from test_write_journal"))[0]!.n),
    since: async (mark) =>
      (
        await db.query<{ written: string }>("select written from test_write_journal where n > $1 and written <> all($2::text[]) order by n", [mark, ignore])
      ).map((r) => r.written),
  };
}

/** Counts of every table a request could write to. */
export async function writeCounts(db: TestDatabase): Promise<Record<string, string>> {
  const [row] = await db.query<Record<string, string>>(`
    select (select count(*) from assets)::text as assets, (select count(*) from accounts)::text as accounts,
           (select count(*) from transfers)::text as transfers, (select count(*) from entries)::text as entries,
           (select count(*) from api_keys)::text as api_keys, (select count(*) from http_idempotency)::text as idempotency,
           (select count(*) from api_keys where revoked_at is not null)::text as revoked,
           (select coalesce(sum(debits_posted + credits_posted + debits_pending + credits_pending), 0)::text from account_balances) as balances,
           (select count(*) from usage_records)::text as usage, (select count(*) from holds)::text as holds,
           (select count(*) from usage_batches)::text as usage_batches, (select count(*) from usage_batch_rejections)::text as usage_batch_rejections,
           (select count(*) from webhook_endpoints)::text as webhook_endpoints, (select count(*) from webhook_deliveries)::text as webhook_deliveries,
           (select string_agg(id || status || url || secret || cardinality(event_types), ',' order by id) from webhook_endpoints) as webhook_endpoint_state,
           (select count(*) from customers)::text as customers, (select count(*) from operators)::text as operators,
           (select count(*) from marketplace_operators)::text as registrations, (select count(*) from operator_invitations)::text as invitations,
           (select count(*) from operator_invitations where accepted_at is not null)::text as accepted_invitations, (select count(*) from fee_schedules)::text as fee_schedules,
           (select count(*) from payouts)::text as payouts, (select count(*) from payout_events)::text as payout_events,
           (select count(*) from payout_policies)::text as payout_policies, (select count(*) from operator_payout_limits)::text as operator_payout_limits,
           (select coalesce(sum(overdraft_limit), 0)::text from account_balances) as credit_limits, (select count(*) from payout_address_challenges)::text as challenges,
           (select count(*) from payout_address_events)::text as address_changes,
           (select count(*) from deposit_addresses)::text as deposit_addresses, (select count(*) from chain_deposits)::text as deposits, (select count(*) from proposals)::text as proposals, (select count(*) from funds_receipts)::text as receipts,
           (select count(*) from reconciliations)::text as reconciliations,
           (select count(*) from asset_settlements)::text as asset_settlements, (select count(*) from assets where retired_at is not null)::text as retired_assets,
           (select count(*) from customers where retired_at is not null)::text as retired_customers,
           (select md5(coalesce(string_agg(id || name || metadata::text, ',' order by id), '')) from marketplaces) as marketplace_descriptions,
           (select md5(coalesce(string_agg(id || name || metadata::text, ',' order by id), '')) from operators) as operator_descriptions,
           (select md5(coalesce(string_agg(marketplace_id || '/' || id || metadata::text, ',' order by marketplace_id, id), '')) from customers) as customer_descriptions,
           (select count(*) from reconciliation_items where resolved_at is not null)::text as resolved_items,
           (select count(*) from payout_preferences)::text as payout_preferences, (select count(*) from rates)::text as rates,
           (select count(*) from conversions)::text as conversions,
           (select count(*) from disputes)::text as disputes, (select count(*) from dispute_events)::text as dispute_events,
           (select count(*) from dispute_items where open)::text as open_dispute_items,
           (select md5(coalesce(string_agg(marketplace_id || ':' || dispute_window_days, ',' order by marketplace_id), '')) from marketplace_dispute_settings) as dispute_windows,
           (select md5(coalesce(string_agg(id || ':' || coalesce(pricing_asset_id::text, '-'), ',' order by id), '')) from marketplaces) as pricing_currencies,
           (select count(*) from balance_monitors)::text as balance_monitors, (select count(*) from events)::text as events,
           (select count(*) from operator_capacity)::text as capacity_versions, (select count(*) from usage_capacity_flags)::text as capacity_flags,
           (select md5(coalesce(string_agg(marketplace_id || '/' || resource || ':' || policy, ',' order by marketplace_id, resource), '')) from capacity_policies) as capacity_policies,
           (select md5(coalesce(string_agg(operator_id || '/' || resource || ':' || updated_at::text, ',' order by operator_id, resource), '')) from operator_costs) as operator_costs`);
  return row!;
}

/**
 * Asserts a problem+json answer with this status and code (and, optionally, an invalid field),
 * and that nothing was written anywhere.
 */
export async function expectRefused(api: TestApi, request: () => Promise<ApiResponse>, status: number, code: string, field?: string): Promise<ApiResponse> {
  const before = await writeCounts(api.db);
  const res = await request();
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: `/problems/${code}`, status, code });
  expect(res.body.detail.length).toBeGreaterThan(5);
  if (field) expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
  expect(await writeCounts(api.db)).toEqual(before);
  return res;
}

/** Two admin keys of two people (each created by the bootstrap key): one proposes, the other approves. */
const fourEyesKeys = new WeakMap<TestApi, Promise<{ proposer: string; approver: string }>>();
export function fourEyes(api: TestApi): Promise<{ proposer: string; approver: string }> {
  let keys = fourEyesKeys.get(api);
  if (!keys) {
    const mint = async (name: string) => expectStatus(await api.call("POST", "/v1/api-keys", { body: { name, role: "admin" } }), 201).body.secret as string;
    keys = (async () => ({ proposer: await mint("four-eyes proposer"), approver: await mint("four-eyes approver") }))();
    fourEyesKeys.set(api, keys);
  }
  return keys;
}

/** Proposes a four-eyes change (an answer 202 with the proposal) with one key and approves it with another; answers the approved proposal. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test and benchmark helpers answer whatever JSON the API sent
export async function proposeAndApprove(api: TestApi, method: "PUT" | "POST", path: string, body: unknown): Promise<any> {
  const { proposer, approver } = await fourEyes(api);
  const proposal = expectStatus(await api.call(method, path, { key: proposer, body }), method === "PUT" ? 202 : 201).body;
  return expectStatus(await api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: approver, body: {} }), 200).body;
}

/**
 * One app and world per test file: made before the file's tests, closed after them. The getters
 * read them once made (`const t = worldPerFile(); ... t.api.call(...)`).
 */
export function worldPerFile(options: Parameters<typeof testApi>[0] = {}): { readonly api: TestApi; readonly w: Awaited<ReturnType<typeof world>> } {
  let api: TestApi | undefined;
  let w: Awaited<ReturnType<typeof world>> | undefined;
  beforeAll(async () => {
    api = await testApi(options);
    w = await world(api);
  });
  afterAll(async () => api?.close());
  return {
    get api() {
      return api!;
    },
    get w() {
      return w!;
    },
  };
}

/**
 * The test's app on a loopback port, so that a real browser or socket can reach it (Node serves it,
 * as in production); answers its origin and how to stop it. `keepGlobals`: leave the global
 * Request and Response as they are (serving replaces them by default, as the service does), for
 * the test runs whose files share one process (vitest.config.ts: no stubbed globals).
 */
export async function serveOnLoopback(api: TestApi, options: { keepGlobals?: boolean } = {}): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: api.app.fetch, port: 0, hostname: "127.0.0.1", ...(options.keepGlobals ? { overrideGlobalObjects: false } : {}) }, () =>
      resolve(s as Server),
    ) as Server;
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
