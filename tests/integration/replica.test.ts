import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openReplicaRouter, walPosition, type ReplicaRouter } from "../../src/db/replica.js";
import { onRealPostgres } from "../support/db.js";
import { expectStatus, testApi, world, type ApiResponse, type TestApi } from "../support/http.js";
import { withDatabase } from "../support/pg-url.js";
import { arrivedOnReplica } from "../support/replica.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { freePort } from "../../scripts/anvil-chain.js";

/** A streaming replica of TEST_DATABASE_URL's server (`npm run db:replica`); each test file's database reaches it by WAL. */
const replicaUrl = process.env.TEST_REPLICA_URL;
const NEEDS_REPLICA = "[runs only with TEST_DATABASE_URL and TEST_REPLICA_URL, a streaming replica of its server: npm run db:replica]";
const MAX_LAG_MS = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!onRealPostgres || !replicaUrl)(`read replica ${NEEDS_REPLICA}`, () => {
  let api: TestApi;
  let w: Awaited<ReturnType<typeof world>>;
  let router: ReplicaRouter;
  let proxy: TcpProxy;
  let replicaAdmin: postgres.Sql;

  beforeAll(async () => {
    api = await testApi();
    const name = new URL(api.db.env.DATABASE_URL!).pathname.slice(1);
    const replicaPort = Number(new URL(replicaUrl!).port || 5432);
    // The service reaches the replica through a proxy that can be cut: the replica "stops" for it alone.
    proxy = new TcpProxy(await freePort(), replicaPort);
    await proxy.up();
    const viaProxy = new URL(withDatabase(replicaUrl!, name));
    viaProxy.port = String(proxy.port);
    await arrivedOnReplica(withDatabase(replicaUrl!, name));
    replicaAdmin = postgres(withDatabase(replicaUrl!, name), { max: 1, onnotice: () => {} });
    router = await openReplicaRouter(api.db, viaProxy.toString(), { maxLagMs: MAX_LAG_MS, waitMs: 200, maxConnections: 4, warn: () => {} });
    api.ledger.reads = router;
    w = await world(api);
  }, 60_000);

  afterAll(async () => {
    await replicaAdmin?.unsafe("select pg_wal_replay_resume()").catch(() => {});
    await replicaAdmin?.end();
    await router?.close();
    await proxy?.down();
    await api?.close();
  });

  const balance = (headers: Record<string, string> = {}) => api.call("GET", `/v1/accounts/${w.m1Customer.id}/balance`, { key: w.keys.m1, headers });
  const posted = async () =>
    (
      await api.db.query<{ posted: string }>("select (credits_posted - debits_posted)::text as posted from account_balances where account_id = $1", [
        w.m1Customer.id,
      ])
    )[0]!.posted;
  const source = (r: ApiResponse) => r.headers.get("ledger-read-source");
  const fund = async (amount: string) => {
    const r = expectStatus(
      await api.call("POST", "/v1/transfers", {
        key: w.keys.m1,
        body: { legs: [{ debit_account_id: w.m1Funding.id, credit_account_id: w.m1Customer.id, amount }] },
      }),
      201,
    );
    return r.headers.get("ledger-position")!;
  };
  /** Reads until one is answered by the replica (it has caught up), within 10 s. */
  const replicaAnswer = async () => {
    for (let i = 0; i < 200; i++) {
      const r = expectStatus(await balance(), 200);
      if (source(r) === "replica") return r;
      await sleep(50);
    }
    throw new Error("no read was answered by the replica within 10 s");
  };

  it("serves balance reads from the replica, saying how stale they may be, and reports too", async () => {
    const r = await replicaAnswer();
    expect(r.body.posted).toBe(await posted());
    const staleness = Number(r.headers.get("ledger-staleness-ms"));
    expect(staleness).toBeGreaterThanOrEqual(0);
    expect(staleness).toBeLessThanOrEqual(MAX_LAG_MS);
    const report = expectStatus(await api.call("GET", "/v1/reports/trial-balance", { key: w.keys.finance }), 200);
    expect(["replica", "primary"]).toContain(source(report));
  });

  it("a write answers its position; a read with it sees the write", async () => {
    let fromReplica = 0;
    for (let i = 0; i < 10; i++) {
      const position = await fund("7");
      expect(position).toMatch(walPosition);
      const r = expectStatus(await balance({ "Ledger-Min-Position": position }), 200);
      expect(r.body.posted).toBe(await posted());
      if (source(r) === "replica") fromReplica++;
    }
    console.log(`reads with a position answered by the replica: ${fromReplica} of 10`);
    expect(fromReplica).toBeGreaterThan(0);
  });

  it("with replay paused: reads with a position wait at most a moment then ask the primary; reads without one go to the primary once beyond the bound", async () => {
    await replicaAnswer();
    await replicaAdmin.unsafe("select pg_wal_replay_pause()");
    try {
      const position = await fund("11");
      const t = performance.now();
      const r = expectStatus(await balance({ "Ledger-Min-Position": position }), 200);
      expect(performance.now() - t).toBeLessThan(1000);
      expect(source(r)).toBe("primary");
      expect(r.headers.get("ledger-staleness-ms")).toBe("0");
      expect(r.body.posted).toBe(await posted());
      await sleep(MAX_LAG_MS + 250);
      const plain = expectStatus(await balance(), 200);
      expect(source(plain)).toBe("primary");
      expect(plain.body.posted).toBe(await posted());
    } finally {
      await replicaAdmin.unsafe("select pg_wal_replay_resume()");
    }
    expect((await replicaAnswer()).body.posted).toBe(await posted());
  });

  it("the replica unreachable: reads come from the primary, right; back: from the replica again", async () => {
    await replicaAnswer();
    await proxy.down();
    try {
      for (let i = 0; i < 5; i++) {
        const position = await fund("3");
        for (const headers of [{}, { "Ledger-Min-Position": position }] as Record<string, string>[]) {
          const r = expectStatus(await balance(headers), 200);
          expect(source(r)).toBe("primary");
          expect(r.body.posted).toBe(await posted());
        }
      }
    } finally {
      await proxy.up();
    }
    expect((await replicaAnswer()).body.posted).toBe(await posted());
  });

  it("decisions about money stay on the primary while the replica lags", async () => {
    await replicaAnswer();
    await replicaAdmin.unsafe("select pg_wal_replay_pause()");
    try {
      await fund("500");
      // Spending all of it is allowed only if the overdraft check sees the funding just made.
      const all = await posted();
      const spend = (amount: string) =>
        api.call("POST", "/v1/transfers", { key: w.keys.m1, body: { legs: [{ debit_account_id: w.m1Customer.id, credit_account_id: w.m1Fees.id, amount }] } });
      expect((await spend((BigInt(all) + 1n).toString())).status).toBeGreaterThanOrEqual(400);
      expectStatus(await spend(all), 201);
      expect(await posted()).toBe("0");
      // Usage is checked against the customer's balance on the primary too.
      expectStatus(await api.call("POST", "/v1/usage", { key: w.keys.m1, body: w.usage("during-lag") }), 201);
    } finally {
      await replicaAdmin.unsafe("select pg_wal_replay_resume()");
    }
  });
});

/** Waits until the database created on the primary exists on the replica. */
