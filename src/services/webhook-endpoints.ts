import { uuidv7 } from "../domain/ids.js";
import type { Principal } from "../domain/access.js";
import { LedgerError } from "../domain/errors.js";
import { newWebhookSecret, sealSecret } from "../domain/secret-box.js";
import { SECRET_OVERLAP_MS } from "../domain/webhooks.js";
import {
  findWebhookEndpoint,
  insertWebhookEndpoint,
  listWebhookEndpoints as listRows,
  updateWebhookEndpoint as updateRow,
  type EndpointOwner,
  type WebhookEndpointRow,
} from "../db/queries/webhooks.js";
import type { Queryable } from "./context.js";
import { checkWebhookUrl } from "./webhook-url.js";

export type { WebhookEndpointRow, WebhookDeliveryRow } from "../db/queries/webhooks.js";

/** What webhook routes need from the deployment: the key sealing secrets, and whether private addresses are allowed. */
export interface WebhookSettings {
  secretsKey: Buffer;
  allowPrivate: boolean;
}

/**
 * The endpoints a key manages: a marketplace key its marketplace's, an operator key its operator's,
 * finance and admin keys the platform's (which receive every event); for reads (`any`), finance and
 * admin keys see every tenant's too.
 */
export function endpointOwner(p: Principal, purpose: "write" | "read"): EndpointOwner {
  if (p.role === "marketplace") return { marketplaceId: p.scopeId, operatorId: null };
  if (p.role === "operator") return { marketplaceId: null, operatorId: p.scopeId };
  return purpose === "read" ? "any" : { marketplaceId: null, operatorId: null };
}

/** The endpoint, if this key may see it; otherwise webhook_endpoint_not_found (another tenant's answers as a missing one). */
export async function visibleWebhookEndpoint(db: Queryable, p: Principal, id: string, forUpdate = false): Promise<WebhookEndpointRow> {
  const row = await findWebhookEndpoint(db, id, endpointOwner(p, "read"), forUpdate);
  if (!row) throw new LedgerError("webhook_endpoint_not_found", `webhook endpoint ${id} does not exist`);
  return row;
}

/**
 * The endpoint, if this key manages it (changes, deletes, rotates its secret, redelivers to it).
 * Finance and admin keys see every tenant's endpoints but manage only the platform's: a tenant's
 * secret is shown to that tenant alone, and its URL is its own (one platform key must not read
 * a tenant's deliveries, redirect them or sign events in its name). Another tenant's answers as a
 * missing one; a tenant's that a platform key can see is refused 403.
 */
export async function managedWebhookEndpoint(db: Queryable, p: Principal, id: string): Promise<WebhookEndpointRow> {
  const row = await visibleWebhookEndpoint(db, p, id, true);
  const owner = endpointOwner(p, "write") as Exclude<EndpointOwner, "any">;
  if (row.marketplace_id !== owner.marketplaceId || row.operator_id !== owner.operatorId) {
    const whose = row.marketplace_id !== null ? `marketplace ${row.marketplace_id}` : `operator ${row.operator_id}`;
    throw new LedgerError(
      "forbidden",
      `webhook endpoint ${id} belongs to ${whose}: only its own keys manage it (finance and admin keys manage the platform's endpoints)`,
    );
  }
  return row;
}

export interface EndpointInput {
  url: string;
  description?: string | null;
  eventTypes?: string[];
}

/** Registers an endpoint for the key's tenant; answers its secret (shown once: stored encrypted). It receives events from now on. */
export async function createWebhookEndpoint(
  tx: Queryable,
  settings: WebhookSettings,
  input: EndpointInput & { principal: Principal; now: Date },
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  const url = await checkWebhookUrl(input.url, settings.allowPrivate);
  const owner = endpointOwner(input.principal, "write") as Exclude<EndpointOwner, "any">;
  const id = uuidv7(input.now.getTime());
  const secret = newWebhookSecret();
  const endpoint = await insertWebhookEndpoint(tx, {
    id,
    marketplace_id: owner.marketplaceId,
    operator_id: owner.operatorId,
    url,
    description: input.description ?? null,
    event_types: [...new Set(input.eventTypes ?? [])].sort(),
    secret: sealSecret(settings.secretsKey, secret, id),
    created_by: input.principal.keyId,
    created_at: input.now,
  });
  return { endpoint, secret };
}

/**
 * Changes an endpoint's URL, description, event types or status. Enabling a disabled endpoint
 * resumes delivery at the first event it had not delivered, with a fresh retry schedule.
 */
export async function updateWebhookEndpoint(
  tx: Queryable,
  settings: WebhookSettings,
  input: Partial<EndpointInput> & { principal: Principal; id: string; status?: "enabled" | "disabled"; now: Date },
): Promise<WebhookEndpointRow> {
  const current = await managedWebhookEndpoint(tx, input.principal, input.id);
  const set: Parameters<typeof updateRow>[2] = {};
  if (input.url !== undefined) set.url = await checkWebhookUrl(input.url, settings.allowPrivate);
  if (input.description !== undefined) set.description = input.description;
  if (input.eventTypes !== undefined) set.event_types = [...new Set(input.eventTypes)].sort();
  if (input.status === "disabled" && current.status !== "disabled")
    Object.assign(set, { status: "disabled", disabled_reason: "requested", next_attempt_at: null });
  if (input.status === "enabled" && current.status !== "enabled")
    Object.assign(set, { status: "enabled", disabled_reason: null, attempts: 0, failing_since: null, next_attempt_at: null });
  return updateRow(tx, current.id, set, input.now);
}

/** Deletes an endpoint: nothing more is sent to it, and it is no longer listed (its delivery log is kept). */
export async function deleteWebhookEndpoint(tx: Queryable, input: { principal: Principal; id: string; now: Date }): Promise<WebhookEndpointRow> {
  const current = await managedWebhookEndpoint(tx, input.principal, input.id);
  return updateRow(tx, current.id, { status: "deleted", disabled_reason: null, next_attempt_at: null }, input.now);
}

/**
 * A new secret; the current one keeps signing beside it (two signatures in webhook-signature) for
 * `overlapMs` (a day by default), so that receivers can switch without missing a delivery.
 */
export async function rotateWebhookSecret(
  tx: Queryable,
  settings: WebhookSettings,
  input: { principal: Principal; id: string; now: Date; overlapMs?: number },
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  const current = await managedWebhookEndpoint(tx, input.principal, input.id);
  const secret = newWebhookSecret();
  const overlap = input.overlapMs ?? SECRET_OVERLAP_MS;
  const endpoint = await updateRow(
    tx,
    current.id,
    {
      secret: sealSecret(settings.secretsKey, secret, current.id),
      previous_secret: overlap > 0 ? current.secret : null,
      previous_secret_until: overlap > 0 ? new Date(input.now.getTime() + overlap) : null,
    },
    input.now,
  );
  return { endpoint, secret };
}

export async function listWebhookEndpoints(db: Queryable, p: Principal, q: { after?: string; limit: number }): Promise<WebhookEndpointRow[]> {
  return listRows(db, { owner: endpointOwner(p, "read"), after: q.after, limit: q.limit });
}
