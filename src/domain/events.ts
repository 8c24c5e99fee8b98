import type { Principal } from "./access.js";
import { payoutStatuses } from "./payouts.js";

/**
 * Every type of event the log holds (docs/api.md, "Events"), derived by the event relay
 * (src/db/event-sources.ts, src/db/balance-monitor-eval.ts) but for webhook_endpoint.disabled.
 */
export const eventTypes = [
  "transfer.posted",
  "transfer.pending",
  "transfer.pending_posted",
  "transfer.pending_voided",
  "transfer.pending_expired",
  "transfer.reversed",
  "usage.batch.completed",
  ...payoutStatuses.map((s) => `payout.${s}` as const),
  "reconciliation.completed",
  "reconciliation.item.mismatch",
  "hold.opened",
  "hold.closed",
  "hold.expired",
  "proposal.approved",
  "proposal.rejected",
  "period.closing",
  "period.closed",
  "period.reopened",
  "balance.threshold.crossed",
  "balance.threshold.recovered",
  "payout_address.changed",
  /** Appended by the webhook worker itself (src/db/queries/webhook-events.ts), not by the relay. */
  "webhook_endpoint.disabled",
] as const;
export type EventType = (typeof eventTypes)[number];

export const eventResourceTypes = [
  "transfer",
  "usage_batch",
  "payout",
  "reconciliation",
  "reconciliation_item",
  "hold",
  "proposal",
  "period",
  "balance_monitor",
  "webhook_endpoint",
  "payout_address",
] as const;

/**
 * The events a key reads: a marketplace key its marketplace's, an operator key its own, admin and
 * finance every event (those scoped to nobody included). Also the owner scope of what a key sets up
 * (balance monitors).
 */
export function eventScope(p: Principal): { marketplaceId?: string; operatorId?: string } {
  if (p.role === "marketplace") return { marketplaceId: p.scopeId! };
  if (p.role === "operator") return { operatorId: p.scopeId! };
  return {};
}

export const monitorDirections = ["below", "above"] as const;
export const monitorBalances = ["posted", "available"] as const;
