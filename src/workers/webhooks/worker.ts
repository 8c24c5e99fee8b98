import { randomUUID } from "node:crypto";
import type { Database } from "../../db/client.js";
import { eventsAfter, type EventRow } from "../../db/queries/events.js";
import {
  advanceWebhookCursor,
  claimWebhookEndpoints,
  completeRedelivery,
  disableFailingEndpoint,
  extendWebhookLease,
  leasedEndpoint,
  pendingRedeliveries,
  releaseWebhookLease,
  scheduleWebhookRetry,
} from "../../db/queries/webhook-leases.js";
import { appendEndpointDisabledEvent } from "../../db/queries/webhook-events.js";
import { findEvent, insertWebhookDelivery, nextAttemptNumber, type WebhookEndpointRow } from "../../db/queries/webhooks.js";
import { backoffMs, failedTooLong, webhookPayload } from "../../domain/webhooks.js";
import type { Logger } from "../../log.js";
import { signedHeaders } from "../../services/webhook-signing.js";
import { sendWebhook, type SendResult, type Sender } from "./send.js";

export interface WebhookWorkerOptions {
  log: Logger;
  secretsKey: Buffer;
  allowPrivate: boolean;
  timeoutMs: number;
  /** Endpoints this worker delivers to at once. */
  concurrency: number;
  /** How long a claim lasts without being renewed (renewed before each send); more than timeoutMs. */
  leaseMs?: number;
  /** Events sent to one endpoint per claim, before it is handed back. */
  perClaim?: number;
  /** [0, 1): the jitter of the backoff (Math.random by default; tests fix it). */
  random?: () => number;
  send?: Sender;
}

/**
 * Delivers the event log to webhook endpoints (docs/api.md, "Webhooks"), at least once, in order
 * per endpoint: an endpoint's next event is sent only once the previous one was answered 2xx. A
 * failure is retried with exponential backoff and jitter (domain/webhooks.ts), and an endpoint that
 * failed for a day is disabled with a `webhook_endpoint.disabled` event. Any number of workers may
 * run on one database: an endpoint is served by the worker holding its lease
 * (db/queries/webhook-leases.ts), so no event is in flight twice at once; a killed worker's lease
 * lapses and another resumes at the endpoint's cursor (the event it was sending is sent again).
 */
export class WebhookWorker {
  private readonly leaseMs: number;
  private readonly send: Sender;
  private readonly random: () => number;

  constructor(
    private readonly db: Database,
    private readonly options: WebhookWorkerOptions,
  ) {
    this.leaseMs = options.leaseMs ?? Math.max(60_000, options.timeoutMs * 3);
    this.send = options.send ?? sendWebhook;
    this.random = options.random ?? Math.random;
  }

  private now(): Date {
    return this.db.clock.now();
  }

  private leaseEnd(): Date {
    return new Date(this.now().getTime() + this.leaseMs);
  }

  /** One pass: claims due endpoints and delivers to each. Returns the attempts made and how many succeeded. */
  async tick(): Promise<{ attempts: number; delivered: number }> {
    const token = randomUUID();
    const claimed = await claimWebhookEndpoints(this.db, { now: this.now(), until: this.leaseEnd(), token, limit: this.options.concurrency });
    const counts = await Promise.all(claimed.map((e) => this.serve(e, token)));
    return counts.reduce((a, b) => ({ attempts: a.attempts + b.attempts, delivered: a.delivered + b.delivered }), { attempts: 0, delivered: 0 });
  }

  private async serve(endpoint: WebhookEndpointRow, token: string): Promise<{ attempts: number; delivered: number }> {
    const count = { attempts: 0, delivered: 0 };
    try {
      await this.redeliver(endpoint, token, count);
      for (let i = 0; i < (this.options.perClaim ?? 20); i++) if (!(await this.deliverNext(endpoint.id, token, count))) break;
    } catch (err) {
      this.options.log.warn({ worker: "webhooks", endpoint: endpoint.id, err }, "webhook delivery pass failed; retried at the next tick");
    } finally {
      await releaseWebhookLease(this.db, endpoint.id, token).catch(() => {});
    }
    return count;
  }

  /** Sends the manual redeliveries queued for the endpoint, once each. */
  private async redeliver(endpoint: WebhookEndpointRow, token: string, count: { attempts: number; delivered: number }): Promise<void> {
    for (const d of await pendingRedeliveries(this.db, endpoint.id, 10)) {
      const current = await this.renewed(endpoint.id, token);
      if (!current) return;
      const event = await findEvent(this.db, { position: BigInt(d.event_position) });
      if (!event) continue;
      const result = await this.attempt(current, { ...event, position: BigInt(event.position) });
      await completeRedelivery(this.db, d.id, { ...result, at: this.now() });
      count.attempts++;
      if (result.ok) count.delivered++;
    }
  }

  /** The endpoint with its lease renewed, or undefined when the lease was lost (another worker has it now). */
  private async renewed(id: string, token: string): Promise<WebhookEndpointRow | undefined> {
    if (!(await extendWebhookLease(this.db, id, token, this.leaseEnd()))) return undefined;
    return leasedEndpoint(this.db, id, token);
  }

  /** Sends the endpoint's next event if it is due; true when it was delivered (and the next may follow). */
  private async deliverNext(id: string, token: string, count: { attempts: number; delivered: number }): Promise<boolean> {
    const endpoint = await this.renewed(id, token);
    if (!endpoint || endpoint.status !== "enabled") return false;
    if (endpoint.next_attempt_at && endpoint.next_attempt_at.getTime() > this.now().getTime()) return false;
    const [event] = await eventsAfter(this.db, {
      after: BigInt(endpoint.cursor),
      limit: 1,
      types: endpoint.event_types.length > 0 ? endpoint.event_types : undefined,
      marketplaceId: endpoint.marketplace_id ?? undefined,
      operatorId: endpoint.operator_id ?? undefined,
    });
    if (!event) return false;
    const result = await this.attempt(endpoint, event);
    count.attempts++;
    await this.db.transaction(async (tx) => {
      const at = this.now();
      await insertWebhookDelivery(tx, {
        id: randomUUID(),
        endpoint_id: endpoint.id,
        event_position: event.position,
        event_id: event.id,
        event_type: event.type,
        attempt: await nextAttemptNumber(tx, endpoint.id, event.position),
        manual: false,
        status: result.ok ? "succeeded" : "failed",
        status_code: result.statusCode,
        latency_ms: result.latencyMs,
        error: result.error,
        created_at: at,
        attempted_at: at,
      });
      // Fenced: a worker whose lease lapsed meanwhile logs its attempt but moves nothing.
      const held = await leasedEndpoint(tx, endpoint.id, token);
      if (!held || held.status !== "enabled") return;
      if (result.ok) return advanceWebhookCursor(tx, endpoint.id, event.position, at);
      await this.failed(tx, held, event, at);
    });
    if (result.ok) count.delivered++;
    return result.ok;
  }

  /** After a failed attempt: the next one after a backoff, or, after a day of failures, the endpoint disabled. */
  private async failed(tx: Parameters<Parameters<Database["transaction"]>[0]>[0], e: WebhookEndpointRow, event: EventRow, at: Date): Promise<void> {
    const failingSince = e.failing_since ?? at;
    const attempts = e.attempts + 1;
    if (!failedTooLong(failingSince, at)) {
      return scheduleWebhookRetry(tx, e.id, { attempts, failingSince, next: new Date(at.getTime() + backoffMs(attempts, this.random)), at });
    }
    await disableFailingEndpoint(tx, e.id, at);
    await appendEndpointDisabledEvent(tx, {
      eventId: `evt_${randomUUID()}`,
      endpointId: e.id,
      marketplaceId: e.marketplace_id,
      operatorId: e.operator_id,
      at,
      data: {
        endpoint_id: e.id,
        url: e.url,
        reason: "failing",
        failing_since: failingSince.toISOString(),
        disabled_at: at.toISOString(),
        attempts,
        undelivered_event_id: event.id,
      },
    });
    this.options.log.warn(
      { worker: "webhooks", endpoint: e.id, failing_since: failingSince.toISOString() },
      "webhook endpoint disabled after a day of failures",
    );
  }

  private async attempt(e: WebhookEndpointRow, event: Pick<EventRow, "id" | "position" | "type" | "occurred_at" | "data">): Promise<SendResult> {
    const body = webhookPayload({ id: event.id, position: event.position, type: event.type, occurredAt: event.occurred_at, data: event.data });
    const headers = signedHeaders(e, this.options.secretsKey, { id: event.id, body, at: this.now() });
    return this.send(e.url, headers, body, { timeoutMs: this.options.timeoutMs, allowPrivate: this.options.allowPrivate });
  }
}
