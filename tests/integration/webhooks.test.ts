import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { claimWebhookEndpoints } from "../../src/db/queries/webhook-leases.js";
import { BACKOFF_BASE_MS } from "../../src/domain/webhooks.js";
import { expectStatus } from "../support/http.js";
import { verifyStandardWebhook, WebhookReceiver } from "../support/webhook-receiver.js";
import { addEvent, webhookWorld } from "../support/webhook-world.js";

/** Delivery of the event log to webhook endpoints: order, signatures, retries, disabling, rotation, several workers. */
let t: Awaited<ReturnType<typeof webhookWorld>>;
const receiver = new WebhookReceiver();
let base: string;

beforeAll(async () => {
  t = await webhookWorld();
  base = await receiver.start();
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});
beforeEach(() => {
  receiver.received.length = 0;
  receiver.behaviour = () => ({ status: 204 });
});

const deliveries = async (key: string, id: string) => expectStatus(await t.api.call("GET", `/v1/webhook-endpoints/${id}/deliveries`, { key }), 200).body.data;
const endpointOf = async (key: string, id: string) => expectStatus(await t.api.call("GET", `/v1/webhook-endpoints/${id}`, { key }), 200).body;
const verify = (secrets: string[], r: { id: string; timestamp: string; signature: string; body: string }) =>
  verifyStandardWebhook(secrets, r, r.body, t.clock.now().getTime());

describe("delivery", () => {
  it("sends each tenant its own events, in order, signed as Standard Webhooks, from the endpoint's creation on", async () => {
    const before = await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m1" });
    const m1 = await t.endpoint(t.keys.m1, { url: `${base}/m1` });
    const platform = await t.endpoint(t.keys.finance, { url: `${base}/all`, event_types: ["usage.batch.completed"] });
    const o1 = await t.endpoint(t.keys.o1, { url: `${base}/o1` });
    const sent = [
      await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m1", operatorId: "o1", data: { n: 1 } }),
      await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m2", operatorId: "o2", data: { n: 2 } }),
      await addEvent(t.db, { type: "payout.confirmed", marketplaceId: "m1", data: { n: 3 } }),
      await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m1", data: { n: 4 } }),
    ];
    await t.worker().tick();
    const m1Got = receiver.at("/m1");
    expect(m1Got.map((r) => r.id)).toEqual([sent[0]!.id, sent[2]!.id, sent[3]!.id]);
    expect(m1Got.map((r) => r.id)).not.toContain(before.id);
    expect(receiver.at("/all").map((r) => r.id)).toEqual([sent[0]!.id, sent[1]!.id, sent[3]!.id]);
    expect(receiver.at("/o1").map((r) => r.id)).toEqual([sent[0]!.id]);
    for (const r of m1Got) {
      expect(verify([m1.secret], r)).toMatchObject({ valid: true, matched: [0] });
      expect(verify([platform.secret], r).valid).toBe(false);
      expect(r.json).toMatchObject({ id: r.id, type: expect.any(String), position: expect.any(String), data: expect.any(Object) });
      expect(Number(r.timestamp)).toBe(Math.floor(t.clock.now().getTime() / 1000));
    }
    expect(verify([o1.secret], receiver.at("/o1")[0]!).valid).toBe(true);
    const log = await deliveries(t.keys.m1, m1.id);
    expect(log).toHaveLength(3);
    expect(log[0]).toMatchObject({ status: "succeeded", status_code: 204, attempt: 1, manual: false, event_id: sent[3]!.id });
    expect(typeof log[0].latency_ms).toBe("number");
    expect((await endpointOf(t.keys.m1, m1.id)).delivered_through).toBe(sent[3]!.position);
    for (const e of [m1, platform, o1])
      expectStatus(await t.api.call("DELETE", `/v1/webhook-endpoints/${e.id}`, { key: e === m1 ? t.keys.m1 : e === o1 ? t.keys.o1 : t.keys.finance }), 200);
  });
});

describe("retries", () => {
  it("retries a failed event with exponential backoff on the service clock, and sends the next only after it", async () => {
    const e = await t.endpoint(t.keys.m1, { url: `${base}/retry` });
    const first = await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m1" });
    const second = await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m1" });
    let failures = 3;
    receiver.behaviour = () => (failures-- > 0 ? { status: 500 } : { status: 200 });
    const worker = t.worker();
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      const at = t.clock.now().getTime();
      await worker.tick();
      const next = Date.parse((await endpointOf(t.keys.m1, e.id)).next_attempt_at);
      waits.push(next - at);
      // Not due yet: nothing is sent, and the second event waits behind the first.
      await worker.tick();
      t.clock.set(new Date(next));
    }
    // random() = 0: exactly half of base × 2^(n−1) (equal jitter).
    expect(waits).toEqual([BACKOFF_BASE_MS / 2, BACKOFF_BASE_MS, BACKOFF_BASE_MS * 2]);
    expect(receiver.at("/retry").map((r) => r.id)).toEqual([first.id, first.id, first.id]);
    await worker.tick();
    expect(receiver.at("/retry").map((r) => r.id)).toEqual([first.id, first.id, first.id, first.id, second.id]);
    const log = await deliveries(t.keys.m1, e.id);
    expect(log.map((d: { attempt: number; status: string }) => `${d.attempt}:${d.status}`)).toEqual([
      "1:succeeded",
      "4:succeeded",
      "3:failed",
      "2:failed",
      "1:failed",
    ]);
    expect(await endpointOf(t.keys.m1, e.id)).toMatchObject({ failing_since: null, failed_attempts: 0, next_attempt_at: null });
    expectStatus(await t.api.call("DELETE", `/v1/webhook-endpoints/${e.id}`, { key: t.keys.m1 }), 200);
  });

  it("disables an endpoint after a day of failures, with a webhook_endpoint.disabled event; enabling it resumes at the undelivered event", async () => {
    const e = await t.endpoint(t.keys.m1, { url: `${base}/down` });
    const watcher = await t.endpoint(t.keys.m1, { url: `${base}/watch`, event_types: ["webhook_endpoint.disabled"] });
    const event = await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m1" });
    receiver.behaviour = (r) => ({ status: r.path === "/down" ? 503 : 204 });
    const worker = t.worker();
    const start = t.clock.now().getTime();
    for (let i = 0; i < 100 && (await endpointOf(t.keys.m1, e.id)).status === "enabled"; i++) {
      await worker.tick();
      const next = (await endpointOf(t.keys.m1, e.id)).next_attempt_at;
      if (next) t.clock.set(new Date(next));
    }
    const down = await endpointOf(t.keys.m1, e.id);
    expect(down).toMatchObject({ status: "disabled", disabled_reason: "failing" });
    expect(t.clock.now().getTime() - start).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(t.clock.now().getTime() - start).toBeLessThan(26 * 3600_000);
    await worker.tick();
    const notice = receiver.at("/watch");
    expect(notice).toHaveLength(1);
    expect(notice[0]!.json).toMatchObject({
      type: "webhook_endpoint.disabled",
      data: { endpoint_id: e.id, reason: "failing", undelivered_event_id: event.id },
    });
    const attempts = receiver.at("/down").length;
    t.clock.advance(3600_000);
    await worker.tick();
    expect(receiver.at("/down")).toHaveLength(attempts);
    receiver.behaviour = () => ({ status: 204 });
    expectStatus(await t.api.call("PATCH", `/v1/webhook-endpoints/${e.id}`, { key: t.keys.m1, body: { status: "enabled" } }), 200);
    await worker.tick();
    // The undelivered event first, then what followed (the notice of its own disabling among them).
    const resumed = receiver.at("/down").slice(attempts);
    expect(resumed.map((r) => r.json.type)).toEqual(["usage.batch.completed", "webhook_endpoint.disabled"]);
    expect(resumed[0]!.id).toBe(event.id);
    expect((await endpointOf(t.keys.m1, e.id)).delivered_through).toBe(resumed[1]!.json.position);
    for (const x of [e, watcher]) expectStatus(await t.api.call("DELETE", `/v1/webhook-endpoints/${x.id}`, { key: t.keys.m1 }), 200);
  });
});

describe("secrets and redelivery", () => {
  it("signs with both secrets while a rotation overlaps, then with the new one only", async () => {
    const e = await t.endpoint(t.keys.m2, { url: `${base}/rot` });
    const rotated = expectStatus(await t.api.call("POST", `/v1/webhook-endpoints/${e.id}/rotate-secret`, { key: t.keys.m2, body: {} }), 200).body;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(e.secret);
    expect(Date.parse(rotated.previous_secret_expires_at) - t.clock.now().getTime()).toBe(24 * 3600_000);
    await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m2" });
    await t.worker().tick();
    const during = receiver.at("/rot")[0]!;
    expect(during.signature.split(" ")).toHaveLength(2);
    expect(verify([e.secret, rotated.secret], during).matched).toEqual([0, 1]);
    t.clock.advance(24 * 3600_000);
    await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m2" });
    await t.worker().tick();
    const after = receiver.at("/rot")[1]!;
    expect(after.signature.split(" ")).toHaveLength(1);
    expect(verify([e.secret], after).valid).toBe(false);
    expect(verify([rotated.secret], after).valid).toBe(true);
    expectStatus(await t.api.call("DELETE", `/v1/webhook-endpoints/${e.id}`, { key: t.keys.m2 }), 200);
  });

  it("redelivers an event on request, once, and logs it", async () => {
    const e = await t.endpoint(t.keys.m1, { url: `${base}/again` });
    const event = await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m1" });
    await t.worker().tick();
    const [first] = await deliveries(t.keys.m1, e.id);
    const byEvent = expectStatus(await t.api.call("POST", `/v1/webhook-endpoints/${e.id}/deliveries/${event.id}/redeliver`, { key: t.keys.m1 }), 202).body;
    const byDelivery = expectStatus(await t.api.call("POST", `/v1/webhook-endpoints/${e.id}/deliveries/${first.id}/redeliver`, { key: t.keys.m1 }), 202).body;
    expect(byEvent).toMatchObject({ status: "pending", manual: true, attempt: 2, event_id: event.id });
    expect(byDelivery).toMatchObject({ status: "pending", manual: true, attempt: 3, event_id: event.id });
    await t.worker().tick();
    await t.worker().tick();
    expect(receiver.at("/again").map((r) => r.id)).toEqual([event.id, event.id, event.id]);
    const log = await deliveries(t.keys.m1, e.id);
    expect(log.filter((d: { manual: boolean; status: string }) => d.manual && d.status === "succeeded")).toHaveLength(2);
    // Another marketplace's event is not one this endpoint receives.
    const other = await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m2" });
    const refused = await t.api.call("POST", `/v1/webhook-endpoints/${e.id}/deliveries/${other.id}/redeliver`, { key: t.keys.m1 });
    expect(refused.status).toBe(404);
    expect(refused.body.code).toBe("webhook_delivery_not_found");
    expectStatus(await t.api.call("DELETE", `/v1/webhook-endpoints/${e.id}`, { key: t.keys.m1 }), 200);
  });
});

describe("several workers", () => {
  it("never has one endpoint's event in flight twice, and each event goes out once", async () => {
    const a = await t.endpoint(t.keys.m1, { url: `${base}/wa` });
    const b = await t.endpoint(t.keys.m1, { url: `${base}/wb` });
    const sent = [];
    for (let i = 0; i < 6; i++) sent.push(await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m1" }));
    receiver.behaviour = () => ({ status: 200, delayMs: 30 });
    const workers = [t.worker(), t.worker(), t.worker()];
    for (let round = 0; round < 4; round++) await Promise.all(workers.map((w) => w.tick()));
    for (const path of ["/wa", "/wb"]) {
      expect(receiver.at(path).map((r) => r.id)).toEqual(sent.map((s) => s.id));
      expect(receiver.at(path).every((r) => r.concurrentOnPath === 0)).toBe(true);
    }
    for (const x of [a, b]) expectStatus(await t.api.call("DELETE", `/v1/webhook-endpoints/${x.id}`, { key: t.keys.m1 }), 200);
  });

  it("resumes an endpoint whose worker died holding it, once its lease lapses", async () => {
    const e = await t.endpoint(t.keys.m1, { url: `${base}/dead` });
    const event = await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m1" });
    // A worker claims the endpoint and dies before sending (or while sending: the effect is the same).
    const claimed = await claimWebhookEndpoints(t.db, {
      now: t.clock.now(),
      until: new Date(t.clock.now().getTime() + 60_000),
      token: crypto.randomUUID(),
      limit: 100,
    });
    expect(claimed.map((c) => c.id)).toContain(e.id);
    await t.worker().tick();
    expect(receiver.at("/dead")).toHaveLength(0);
    t.clock.advance(60_000);
    await t.worker().tick();
    expect(receiver.at("/dead").map((r) => r.id)).toEqual([event.id]);
    expectStatus(await t.api.call("DELETE", `/v1/webhook-endpoints/${e.id}`, { key: t.keys.m1 }), 200);
  });

  it("refuses at delivery an address that is not allowed (the check is made again on the address connected to)", async () => {
    const e = await t.endpoint(t.keys.m1, { url: `${base.replace("127.0.0.1", "localhost")}/ssrf` });
    await addEvent(t.db, { type: "usage.batch.completed", marketplaceId: "m1" });
    await t.worker({ allowPrivate: false }).tick();
    expect(receiver.at("/ssrf")).toHaveLength(0);
    const [attempt] = await deliveries(t.keys.m1, e.id);
    expect(attempt).toMatchObject({ status: "failed", status_code: null });
    expect(attempt.error).toMatch(/loopback/);
    expectStatus(await t.api.call("DELETE", `/v1/webhook-endpoints/${e.id}`, { key: t.keys.m1 }), 200);
  });
});
