/**
 * The webhook scenario: an API process and two worker processes deliver a marketplace's events to
 * a loopback receiver that sometimes answers 500, sometimes answers too late, is stopped and
 * started again, and holds one delivery while the worker sending it is SIGKILLed (its lease then
 * lapses and the event is sent again). Afterwards: every event of the marketplace arrived at least
 * once, first arrivals in position order, re-sends only of the event at the head, every signature
 * valid (Standard Webhooks, checked with node:crypto by tests/support/webhook-receiver.ts).
 */
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { freePort } from "../scripts/anvil-chain.js";
import { verifyStandardWebhook } from "../tests/support/webhook-receiver.js";
import {
  apiProcess,
  between,
  checkClient,
  checkExits,
  checkUsage,
  must,
  newStats,
  seedMarket,
  send,
  sleep,
  usageRecord,
  verify,
  workerProcess,
} from "./harness.js";
import type { ClientStats, Finding, Market, Service } from "./harness.js";
import type { Scenario } from "./scenarios.js";
import { ChaosReceiver, pidOfConnection, type Answer, type Arrival } from "./webhook-receiver.js";

const ADMIN_KEY = `chaos-admin-${randomBytes(16).toString("hex")}`;
const TIMEOUT_MS = 1000;
const LEASE_MS = 3000;

type Fault = { at: number; kind: "kill" | "crash" | "500" | "slow" };

/** Faults at random arrival numbers, applied to the first new event arriving at or after each. */
function faultPlan(quick: boolean): Fault[] {
  const f = (kind: Fault["kind"], lo: number, hi: number): Fault => ({ at: between(lo, hi), kind });
  const plan = quick
    ? [f("kill", 10, 25), f("crash", 25, 40), ...[0, 1].map(() => f("500", 5, 50)), ...[0, 1].map(() => f("slow", 5, 50))]
    : [
        f("kill", 15, 35),
        f("kill", 150, 200),
        f("crash", 50, 80),
        f("crash", 220, 280),
        ...Array.from({ length: 8 }, () => f("500", 5, 350)),
        ...Array.from({ length: 5 }, () => f("slow", 5, 350)),
      ];
  return plan.sort((a, b) => a.at - b.at);
}

/**
 * Usage (singles from four clients, batches) and deposits, paced, so that events keep coming while
 * delivery runs: at least `o.min` rounds, then on while `o.more()` (faults still to come), at most `o.max`.
 */
async function eventLoad(
  stats: ClientStats,
  base: string,
  m: Market,
  o: { min: number; max: number; more: () => boolean },
): Promise<{ sent: string[]; acknowledged: Set<string>; rounds: number }> {
  const sent: string[] = [];
  const acknowledged = new Set<string>();
  let r = 0;
  for (; r < o.max && (r < o.min || o.more()); r++) {
    const singles = Array.from({ length: 4 }, (_, c) =>
      (async () => {
        for (let i = 0; i < 2; i++) {
          const id = `wh-${r}-c${c}-${i}`;
          sent.push(id);
          const a = await send(stats, [base], "POST", "/v1/usage", m.key, usageRecord(m, "USDC", id), `wh-single-${id}`);
          if ((a.status === 200 || a.status === 201) && a.body.external_id === id) acknowledged.add(id);
        }
      })(),
    );
    const ids = Array.from({ length: 20 }, (_, i) => `wh-${r}-b${i}`);
    sent.push(...ids);
    const batch = send(stats, [base], "POST", "/v1/usage/batch", m.key, { records: ids.map((id) => usageRecord(m, "USDC", id)) }, `wh-batch-${r}`).then((a) => {
      if (a.status === 200)
        a.body.results.forEach((x: { status: string; external_id?: string }, k: number) => {
          if ((x.status === "accepted" || x.status === "duplicate") && x.external_id === ids[k]) acknowledged.add(ids[k]!);
        });
    });
    const deposits = [0, 1].map((i) =>
      must(
        stats,
        [base],
        "POST",
        `/v1/customers/${m.customers[(r + i) % m.customers.length]}/deposits`,
        m.key,
        { asset: "USDC", amount: "1000000" },
        `wh-dep-${r}-${i}`,
      ),
    );
    await Promise.all([...singles, batch, ...deposits]);
    await sleep(between(600, 1000));
  }
  return { sent, acknowledged, rounds: r };
}

interface Figures {
  events: number;
  arrivals: number;
  resends: number;
  lost: number;
  strangers: number;
  changedResends: number;
  outOfOrder: number;
  staleResends: number;
  badSignatures: number;
  resentAfterAck: number;
  killedResent: number;
}

/** Compares what arrived with the marketplace's events after the endpoint's starting cursor. */
function compare(events: { position: string; id: string; type: string }[], arrivals: Arrival[], secret: string, killedIds: string[]): Figures {
  const byId = new Map(events.map((e) => [e.id, e]));
  const first = new Map<string, Arrival>();
  const f: Figures = {
    events: events.length,
    arrivals: arrivals.length,
    resends: 0,
    lost: 0,
    strangers: 0,
    changedResends: 0,
    outOfOrder: 0,
    staleResends: 0,
    badSignatures: 0,
    resentAfterAck: 0,
    killedResent: 0,
  };
  let head: string | undefined;
  let maxPos = -1n;
  const acked = new Set<string>();
  for (const a of arrivals) {
    if (!verifyStandardWebhook([secret], a, a.body, a.at).valid) f.badSignatures++;
    let body: { id?: string; position?: string; type?: string } = {};
    try {
      body = JSON.parse(a.body);
    } catch {
      // counted below: not an event
    }
    const e = byId.get(a.id);
    if (!e || body.id !== e.id || body.position !== e.position || body.type !== e.type) f.strangers++;
    const earlier = first.get(a.id);
    if (earlier) {
      f.resends++;
      if (earlier.body !== a.body) f.changedResends++;
      if (a.id !== head) f.staleResends++;
      if (acked.has(a.id)) f.resentAfterAck++;
    } else {
      first.set(a.id, a);
      head = a.id;
      const pos = BigInt(body.position ?? "-1");
      if (pos < maxPos) f.outOfOrder++;
      if (pos > maxPos) maxPos = pos;
    }
    if (a.acked) acked.add(a.id);
  }
  f.lost = events.filter((e) => !first.has(e.id)).length;
  f.killedResent = killedIds.filter((id) => arrivals.filter((a) => a.id === id).length >= 2).length;
  return f;
}

async function waitFor(what: string, ms: number, done: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await done())) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(200);
  }
  return Date.now() - started;
}

export const webhookDelivery: Scenario = {
  name: "webhook_delivery_under_faults",
  description:
    "a marketplace's events delivered by two worker processes to a loopback receiver that answers 500 or too late at random, is stopped and restarted, and holds a delivery while the worker sending it is SIGKILLed",
  async run(ctx) {
    const dbUrl = await ctx.cluster.createDatabase(`chaos_webhooks_${process.pid}`);
    const common = { DATABASE_URL: dbUrl, WEBHOOK_SECRETS_KEY: randomBytes(32).toString("base64"), WEBHOOKS_ALLOW_PRIVATE: "true" };
    const api = apiProcess("api", await freePort(), { ...common, ADMIN_API_KEY: ADMIN_KEY, RUN_WORKERS: "false" });
    const workers: Service[] = [1, 2].map((i) =>
      workerProcess(`webhook-worker-${i}`, {
        ...common,
        WEBHOOK_INTERVAL_MS: "100",
        WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        WEBHOOK_LEASE_MS: String(LEASE_MS),
        EVENT_RELAY_INTERVAL_MS: "100",
        JOURNAL_SEAL_INTERVAL_MS: "1000",
      }),
    );
    const pending = faultPlan(ctx.quick);
    const applied = { kill: 0, crash: 0, "500": 0, slow: 0, killFound: 0 };
    const killedIds: string[] = [];
    const background: Promise<unknown>[] = [];
    const seen = new Set<string>();
    let quietUntil = 0;
    const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
    const refusedAttempts = async () =>
      (await sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where status_code is null and error not like 'no answer%'`)[0]!.n;
    const port = await freePort();
    const receiver: ChaosReceiver = new ChaosReceiver(port, async (a): Promise<Answer> => {
      const fresh = !seen.has(a.id) && a.n > quietUntil;
      seen.add(a.id);
      const due = fresh && pending.length > 0 && pending[0]!.at <= a.n ? pending.shift()! : undefined;
      if (!due) return { status: between(0, 1) ? 200 : 204 };
      applied[due.kind]++;
      if (due.kind === "500") return { status: 500 };
      if (due.kind === "slow") return { status: 200, delayMs: TIMEOUT_MS + 500 };
      if (due.kind === "crash") {
        quietUntil = a.n + 3;
        background.push(
          (async () => {
            await sleep(150);
            await receiver.stop();
            const down = Date.now();
            // Down for 1.5 s, and until a delivery was refused meanwhile (at most 10 s).
            while (Date.now() - down < 1500 || ((await refusedAttempts()) === 0 && Date.now() - down < 10_000)) await sleep(100);
            ctx.log(`  receiver stopped after delivery ${a.n} for ${((Date.now() - down) / 1000).toFixed(1)} s`);
            await receiver.start();
          })(),
        );
        return { status: 204 };
      }
      // The worker sending this delivery, found by its connection, is killed while it waits for the answer.
      const alive = workers.filter((w) => w.alive);
      const pid = pidOfConnection(
        a.remotePort,
        port,
        alive.map((w) => w.child!.pid!),
      );
      const target = alive.find((w) => w.child!.pid === pid) ?? alive[between(0, alive.length - 1)]!;
      if (pid) applied.killFound++;
      killedIds.push(a.id);
      quietUntil = a.n + 3;
      await target.kill();
      ctx.log(`  killed ${target.name} while it was sending delivery ${a.n}${pid ? "" : " (sender not found: a random worker)"}`);
      background.push(sleep(1000).then(() => target.start()));
      return { hold: true };
    });
    const stats = newStats();
    try {
      const setupStarted = Date.now();
      await api.start();
      await Promise.all(workers.map((w) => w.start()));
      await receiver.start();
      await must(stats, [api.base], "POST", "/v1/assets", ADMIN_KEY, { code: "USDC", scale: 6, settlement: { kind: "offchain" } });
      const m = await seedMarket(stats, [api.base], ADMIN_KEY, { asset: "USDC", operators: 8, customers: 8, deposit: "1000000000000" });
      const endpoint = await must(
        stats,
        [api.base],
        "POST",
        "/v1/webhook-endpoints",
        m.key,
        { url: receiver.url, description: "chaos receiver" },
        "wh-endpoint",
      );
      const startCursor = BigInt(endpoint.delivered_through);
      const secret = endpoint.secret as string;
      const t0 = Date.now();
      ctx.log(`  set up in ${((t0 - setupStarted) / 1000).toFixed(1)} s; endpoint registered`);
      const load = await eventLoad(stats, api.base, m, { min: 6, max: ctx.quick ? 40 : 150, more: () => pending.length > 0 });
      ctx.log(`  load done in ${((Date.now() - t0) / 1000).toFixed(1)} s (${load.rounds} rounds); ${receiver.arrivals.length} deliveries so far`);
      await Promise.all(background);
      if (!receiver.up) await receiver.start();
      // Every finished transaction relayed, then the endpoint's cursor at the marketplace's last event.
      const [{ target }] = (await sql`select pg_snapshot_xmax(pg_current_snapshot())::text as target`) as unknown as [{ target: string }];
      await waitFor("event relay", 30_000, async () => {
        const [r] = await sql`select watermark::text as w from event_relay where id = 1`;
        return r !== undefined && BigInt(r.w) >= BigInt(target);
      });
      const events = await sql<{ position: string; id: string; type: string }[]>`
        select e.position::text as position, e.id, e.type from events e
         where e.marketplace_id = 'chaos' and e.position > ${startCursor.toString()} order by e.position`;
      const last = events.length > 0 ? BigInt(events[events.length - 1]!.position) : startCursor;
      let caughtUpMs = -1;
      let cursorError = "";
      try {
        caughtUpMs = await waitFor("endpoint cursor", ctx.quick ? 45_000 : 120_000, async () => {
          const [r] = await sql`select cursor::text as c from webhook_endpoints where id = ${endpoint.id}`;
          return BigInt(r!.c) >= last;
        });
      } catch (err) {
        cursorError = String((err as Error).message);
      }
      const [ep] = await sql`select status, cursor::text as cursor, attempts from webhook_endpoints where id = ${endpoint.id}`;
      const [log] = await sql`
        select count(*)::int as attempts, count(*) filter (where status = 'succeeded')::int as succeeded,
               count(*) filter (where status = 'failed' and status_code is null and error not like 'no answer%')::int as refused,
               count(*) filter (where error like 'no answer%')::int as timed_out,
               count(distinct event_position) filter (where status = 'succeeded')::int as events_succeeded
          from webhook_deliveries where endpoint_id = ${endpoint.id}`;
      const f = compare(events, receiver.arrivals, secret, killedIds);
      const usage = await checkUsage(dbUrl, load.sent, load.acknowledged);
      ctx.log(`  ${f.events} events, ${f.arrivals} deliveries (${f.resends} re-sends); cursor caught up ${caughtUpMs} ms after the relay`);
      const findings: Finding[] = [
        {
          check: "faults injected: the sending worker SIGKILLed mid-delivery, the receiver stopped, 500 and too-late answers",
          ok: applied.kill >= 1 && applied.killFound === applied.kill && applied.crash >= 1 && log!.refused >= 1 && applied["500"] >= 1 && applied.slow >= 1,
          detail: `${applied.kill} kills (sender found ${applied.killFound}×), ${applied.crash} receiver stops (${log!.refused} attempts refused), ${applied["500"]} answers 500, ${applied.slow} too late (${log!.timed_out} timed out); ${pending.length} planned faults not reached`,
        },
        {
          check: "the endpoint's cursor reached the marketplace's last event, endpoint still enabled",
          ok: !cursorError && ep!.status === "enabled",
          detail: cursorError || `cursor ${ep!.cursor} = last event ${last} after ${caughtUpMs} ms; status ${ep!.status}`,
        },
        {
          check: "every event of the marketplace arrived at least once",
          ok: f.lost === 0 && f.events > 0,
          detail: `${f.events} events, ${f.lost} never arrived`,
        },
        {
          check: "nothing arrived that is not one of its events; a re-send is the same webhook-id with the same body",
          ok: f.strangers === 0 && f.changedResends === 0,
          detail: `${f.strangers} strangers, ${f.changedResends} re-sends with another body`,
        },
        {
          check: "first arrivals in position order; re-sends only of the event at the head",
          ok: f.outOfOrder === 0 && f.staleResends === 0,
          detail: `${f.outOfOrder} out of order, ${f.staleResends} re-sends of an earlier event`,
        },
        {
          check: "every signature verifies (Standard Webhooks, node:crypto)",
          ok: f.badSignatures === 0,
          detail: `${f.arrivals} deliveries, ${f.badSignatures} bad signatures`,
        },
        {
          check: "the delivery interrupted by each kill was sent again (the lease lapsed)",
          ok: f.killedResent === killedIds.length,
          detail: `${f.killedResent} of ${killedIds.length} re-sent`,
        },
        {
          check: "no event sent again after it was answered 2xx in time",
          ok: f.resentAfterAck === 0,
          detail: `${f.resentAfterAck} re-sent after a timely 2xx`,
        },
        {
          check: "the delivery log has a succeeded attempt for every event",
          ok: log!.events_succeeded === f.events,
          detail: `${log!.attempts} attempts logged, ${log!.succeeded} succeeded for ${log!.events_succeeded} events`,
        },
        checkExits([api, ...workers]),
        ...usage.findings,
        ...checkClient(stats),
        verify(dbUrl),
      ];
      return {
        operations: {
          events: f.events,
          deliveries: f.arrivals,
          duplicates: f.resends,
          out_of_order: f.outOfOrder,
          bad_signatures: f.badSignatures,
          lost_events: f.lost,
          load_rounds: load.rounds,
          records_sent: load.sent.length,
          http_requests: stats.requests,
        },
        faults: {
          worker_sigkills: applied.kill,
          receiver_crashes: applied.crash,
          answers_500: applied["500"],
          answers_too_late: applied.slow,
          attempts_refused: log!.refused,
        },
        lost: f.lost + usage.lost,
        // At-least-once re-sends (after a failure or a kill) are expected; a re-send of an event answered 2xx in time is a double.
        duplicated: f.resentAfterAck + usage.doubled,
        client: stats,
        findings,
      };
    } finally {
      await sql.end();
      await Promise.allSettled(background);
      await Promise.all([api, ...workers].map((s) => s.stop()));
      await receiver.stop();
    }
  },
};
