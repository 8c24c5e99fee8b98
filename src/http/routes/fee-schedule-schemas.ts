import { z } from "@hono/zod-openapi";
import type { ConfiguredRule } from "../../domain/rating.js";
import type { FeeSchedule as Schedule } from "../../services/fee-schedules.js";
import { Timestamp } from "../schemas.js";

const Units = z
  .record(z.string(), z.string())
  .openapi({ description: "per asset code: an integer amount in that asset's smallest unit", example: { USDC: "10000" } });

const Override = z.strictObject({
  resource: z.string().optional().openapi({ description: "a resource, or a prefix ending in *", example: "gpu:h100*" }),
  operator_id: z.string().optional(),
  bps: z.number().int().optional(),
  fixed: Units.optional(),
  min: Units.optional(),
  max: Units.optional(),
});

export const FeeRuleWire = z
  .strictObject({
    party: z.string().openapi({ description: "marketplace, protocol, or another fee party", example: "marketplace" }),
    bps: z.number().int().openapi({ description: "basis points of gross (0-10000)", example: 1000 }),
    fixed: Units.optional(),
    min: Units.optional(),
    max: Units.optional(),
    overrides: z.array(Override).optional(),
  })
  .openapi("FeeRule");

export const FeeSchedule = z
  .object({ marketplace_id: z.string(), version: z.number().int(), effective_from: Timestamp, rules: z.array(FeeRuleWire), created_at: Timestamp })
  .openapi("FeeSchedule");

export const toConfiguredRule = (r: z.infer<typeof FeeRuleWire>): ConfiguredRule => ({
  party: r.party,
  bps: r.bps,
  fixed: r.fixed,
  min: r.min,
  max: r.max,
  overrides: r.overrides?.map((o) => ({ resource: o.resource, operatorId: o.operator_id, bps: o.bps, fixed: o.fixed, min: o.min, max: o.max })),
});

const ruleOut = (r: ConfiguredRule) => ({
  party: r.party,
  bps: r.bps,
  fixed: r.fixed,
  min: r.min,
  max: r.max,
  overrides: r.overrides?.map((o) => ({ resource: o.resource, operator_id: o.operatorId, bps: o.bps, fixed: o.fixed, min: o.min, max: o.max })),
});

export const feeScheduleOut = (s: Schedule) => ({
  marketplace_id: s.marketplaceId,
  version: s.version,
  effective_from: s.effectiveFrom.toISOString(),
  rules: s.rules.map(ruleOut),
  created_at: s.createdAt.toISOString(),
});
