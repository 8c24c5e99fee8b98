import { Webhook } from "standardwebhooks";
import { openSecret } from "../domain/secret-box.js";
import type { WebhookEndpointRow } from "../db/queries/webhooks.js";

/**
 * The Standard Webhooks headers of a delivery: webhook-id (the event's id, the same on every
 * attempt, for the receiver's deduplication), webhook-timestamp (seconds, the service clock) and
 * webhook-signature, `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` for the current secret, and a
 * second one, space-separated, for the secret before a rotation while its overlap lasts. Signed by
 * the spec's reference library.
 */
export function signedHeaders(
  endpoint: Pick<WebhookEndpointRow, "id" | "secret" | "previous_secret" | "previous_secret_until">,
  key: Buffer,
  msg: { id: string; body: string; at: Date },
): Record<string, string> {
  const secrets = [openSecret(key, endpoint.secret, endpoint.id)];
  if (endpoint.previous_secret && endpoint.previous_secret_until && endpoint.previous_secret_until.getTime() > msg.at.getTime())
    secrets.push(openSecret(key, endpoint.previous_secret, endpoint.id));
  return {
    "content-type": "application/json",
    "user-agent": "settlement-ledger-webhooks/1",
    "webhook-id": msg.id,
    "webhook-timestamp": Math.floor(msg.at.getTime() / 1000).toString(),
    "webhook-signature": secrets.map((s) => new Webhook(s).sign(msg.id, msg.at, msg.body)).join(" "),
  };
}
