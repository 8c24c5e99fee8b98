import { z } from "@hono/zod-openapi";
import { eventResourceTypes, eventTypes, monitorBalances, monitorDirections } from "../../domain/events.js";
import type { EventRow } from "../../services/events.js";
import type { BalanceMonitorRow } from "../../services/balance-monitors.js";
import { CursorQuery, Timestamp, Uuid } from "../schemas.js";

/** One event of the log, as GET /v1/events answers it and webhooks carry it. */
export const Event = z
  .object({
    id: z.string().openapi({ description: "evt_…: stable, unique; the webhook-id of its deliveries", example: "evt_0193a5c2-7d41-7e6b-8f20-3c9d1e4b5a67" }),
    position: z.string().openapi({ description: "strictly increasing in the log: pass the last one you processed as `cursor`", example: "1042" }),
    type: z.enum(eventTypes),
    occurred_at: Timestamp,
    resource_type: z.enum(eventResourceTypes),
    resource_id: z.string().openapi({ example: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e" }),
    marketplace_id: z.string().nullable().openapi({ description: "the marketplace whose keys read it (null: none)" }),
    operator_id: z.string().nullable().openapi({ description: "the operator whose keys read it (null: none)" }),
    data: z.record(z.string(), z.unknown()).openapi({ description: "the payload of the type (docs/api.md, Events); amounts are strings" }),
  })
  .openapi("Event");

export const eventOut = (e: EventRow): z.infer<typeof Event> => ({
  id: e.id,
  position: e.position.toString(),
  type: e.type as z.infer<typeof Event>["type"],
  occurred_at: e.occurred_at.toISOString(),
  resource_type: e.resource_type as z.infer<typeof Event>["resource_type"],
  resource_id: e.resource_id,
  marketplace_id: e.marketplace_id,
  operator_id: e.operator_id,
  data: e.data,
});

const typeList = z.string().max(2000).openapi({ description: "an event type, or several separated by commas", example: "payout.confirmed,payout.failed" });

export const EventsQuery = CursorQuery.extend({
  cursor: z
    .string()
    .regex(/^[0-9]{1,18}$/, "must be an event position (the position of the last event you read), e.g. 1042")
    .optional()
    .openapi({ description: "the position of the last event you processed (or next_cursor); events after it are answered", example: "1042" }),
  type: z
    .union([typeList, z.array(typeList).max(50)])
    .optional()
    .openapi({ description: "only these types: repeat the parameter or separate by commas" }),
  resource_type: z.enum(eventResourceTypes).optional(),
  resource_id: z.string().min(1).max(200).optional().openapi({ example: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e" }),
});

/** The type filter as a list of known types, or the name of the first unknown one. */
export function typeFilter(type: string | string[] | undefined): { types?: string[]; unknown?: string } {
  if (type === undefined) return {};
  const types = [...new Set((Array.isArray(type) ? type : [type]).flatMap((t) => t.split(",")).map((t) => t.trim()))];
  const unknown = types.find((t) => !(eventTypes as readonly string[]).includes(t));
  return unknown === undefined ? { types } : { unknown };
}

const IntegerString = (description: string, example: string, signed: boolean) =>
  z
    .string()
    .regex(
      signed ? /^-?(0|[1-9][0-9]{0,76})$/ : /^(0|[1-9][0-9]{0,76})$/,
      `must be ${signed ? "an" : "a non-negative"} integer amount in the asset's smallest unit, as a string`,
    )
    .openapi({ description, example });

export const BalanceMonitorCreate = z
  .strictObject({
    account_id: Uuid.openapi({ description: "the account whose balance is watched (one the key may read)" }),
    direction: z.enum(monitorDirections).openapi({ description: "below: fire when the balance drops below the threshold; above: when it rises above it" }),
    balance: z
      .enum(monitorBalances)
      .optional()
      .openapi({ description: "which balance, on the account's normal side (default available: posted less outgoing holds)" }),
    threshold: IntegerString("the line, in the asset's smallest unit (may be negative)", "50000000", true),
    hysteresis: IntegerString("how far back past the threshold the balance must come before the monitor recovers (default 0)", "5000000", false).optional(),
  })
  .openapi("BalanceMonitorCreate");

export const BalanceMonitor = z
  .object({
    id: Uuid,
    account_id: Uuid,
    asset_id: Uuid,
    direction: z.enum(monitorDirections),
    balance: z.enum(monitorBalances),
    threshold: z.string(),
    hysteresis: z.string(),
    state: z.enum(["ok", "crossed"]).openapi({ description: "ok: on the right side of the line; crossed: past it (until it recovers)" }),
    last_balance: z.string().nullable().openapi({ description: "the balance when the state last changed" }),
    changed_at: Timestamp.nullable(),
    marketplace_id: z.string().nullable(),
    operator_id: z.string().nullable(),
    created_at: Timestamp,
  })
  .openapi("BalanceMonitor");

export const balanceMonitorOut = (m: BalanceMonitorRow): z.infer<typeof BalanceMonitor> => ({
  id: m.id,
  account_id: m.account_id,
  asset_id: m.asset_id,
  direction: m.direction,
  balance: m.balance,
  threshold: String(m.threshold),
  hysteresis: String(m.hysteresis),
  state: m.state,
  last_balance: m.last_balance === null ? null : String(m.last_balance),
  changed_at: m.changed_at?.toISOString() ?? null,
  marketplace_id: m.marketplace_id,
  operator_id: m.operator_id,
  created_at: m.created_at.toISOString(),
});
