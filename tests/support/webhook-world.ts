import type { Database } from "../../src/db/client.js";
import { ManualClock } from "../../src/domain/clock.js";
import { createLogger } from "../../src/log.js";
import { WebhookWorker, type WebhookWorkerOptions } from "../../src/workers/webhooks/worker.js";
import { testClock } from "./clock.js";
import { freshDatabase } from "./db.js";
import { expectStatus, TEST_WEBHOOK_KEY, testApi, type TestApi } from "./http.js";

/** Appends an event to the log as the relay would (the next position, event_relay moved on): test setup for delivery. */
export async function addEvent(db: Database, e: { type: string; marketplaceId?: string; operatorId?: string; data?: Record<string, unknown> }) {
  const [row] = await db.query<{ position: string; id: string }>(
    `with r as (update event_relay set last_position = last_position + 1 where id = 1 returning last_position)
     insert into events (position, id, type, marketplace_id, operator_id, resource_type, resource_id, data, occurred_at)
     select r.last_position, 'evt_' || gen_random_uuid(), $1, $2, $3, 'test', 'r' || r.last_position, $4::jsonb, $5 from r
     returning position::text as position, id`,
    [e.type, e.marketplaceId ?? null, e.operatorId ?? null, JSON.stringify(e.data ?? {}), db.clock.now().toISOString()],
  );
  return row!;
}

/** An API on a database whose clock moves only when told, with marketplaces m1, m2, operator o1 and their keys. */
export async function webhookWorld() {
  const clock = new ManualClock(testClock.now());
  const db = await freshDatabase({ clock });
  const api: TestApi = await testApi({ db });
  for (const [m, o] of [
    ["m1", "o1"],
    ["m2", "o2"],
  ] as const) {
    expectStatus(await api.call("POST", "/v1/marketplaces", { body: { id: m, name: m } }), 201);
    expectStatus(await api.call("POST", "/v1/operators", { body: { id: o, name: o, marketplace_id: m } }), 201);
  }
  const key = async (role: string, scope_id?: string) =>
    expectStatus(await api.call("POST", "/v1/api-keys", { body: { name: role, role, scope_id } }), 201).body.secret as string;
  const keys = { finance: await key("finance"), m1: await key("marketplace", "m1"), m2: await key("marketplace", "m2"), o1: await key("operator", "o1") };
  const worker = (options: Partial<WebhookWorkerOptions> = {}) =>
    new WebhookWorker(db, {
      log: createLogger("silent"),
      secretsKey: TEST_WEBHOOK_KEY,
      allowPrivate: true,
      timeoutMs: 2000,
      concurrency: 8,
      random: () => 0,
      ...options,
    });
  const endpoint = async (key: string, body: Record<string, unknown>) => expectStatus(await api.call("POST", "/v1/webhook-endpoints", { key, body }), 201).body;
  return {
    clock,
    db,
    api,
    keys,
    worker,
    endpoint,
    async close() {
      await api.close();
      await db.destroy();
    },
  };
}
