import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { publishFeeSchedule } from "../../services/fee-schedules.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { Timestamp } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { FeeSchedule, feeScheduleOut, FeeRuleWire, toConfiguredRule } from "./fee-schedule-schemas.js";
import { MarketplaceId } from "./party-schemas.js";

const Body = z.strictObject({ effective_from: Timestamp, rules: z.array(FeeRuleWire).max(10) }).openapi("FeeScheduleCreate");

const route = createRoute({
  method: "post",
  path: "/v1/marketplaces/{id}/fee-schedules",
  operationId: "publishFeeSchedule",
  tags: ["usage"],
  summary: "Publish the next version of a marketplace's fee schedule (admin)",
  description:
    "fee = clamp(floor(gross × bps / 10⁴) + fixed, min, max), capped in rule order so that fees never exceed gross; net = gross − Σ fees. Fixed, min and max are given per asset code in that asset's smallest unit.",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: { params: z.object({ id: MarketplaceId }), headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(FeeSchedule, "published"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    return idempotently(c, body, async (tx) => ({
      status: 201,
      body: feeScheduleOut(
        await publishFeeSchedule(tx, { marketplaceId: id, effectiveFrom: new Date(body.effective_from), rules: body.rules.map(toConfiguredRule) }),
      ),
    })) as never;
  });
}
