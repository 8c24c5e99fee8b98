import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { setUsageLimits } from "../../services/usage-limits.js";
import { roles } from "../auth.js";
import type { AppEnv } from "../env.js";
import { jsonBodyGuard } from "../json-body.js";
import { Amount } from "../schemas.js";
import { AssetCode, PartyIdParam } from "../usage-schemas.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { UsageLimitsOut, usageLimitsOut } from "./usage-limit-schemas.js";

const Rate = z.string().max(60).regex(/^(0|[1-9][0-9]{0,39})(\.[0-9]{1,18})?$/, "must be a decimal of at most 40 digits and 18 decimals");

const Body = z.strictObject({
  max_gross_per_record: Amount.nullable().optional().openapi({ description: "the largest gross of one record, in the asset's smallest units; null: the default" }),
  max_quantity_per_second: z.record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "must be a unit name"), Rate.nullable()).optional()
    .refine((r) => r === undefined || Object.keys(r).length <= 100, "at most 100 units")
    .openapi({ description: "per unit: the largest quantity per second of a record's period; null removes a unit's rate (back to its default)" }),
}).openapi("UsageLimitsSet");

const route = createRoute({
  method: "put", path: "/v1/marketplaces/{id}/usage-limits/{asset}", tags: ["usage"],
  summary: "Set what one usage record of the marketplace may claim in an asset (admin)", security,
  middleware: [roles("admin"), jsonBodyGuard] as const,
  request: { params: z.object({ id: PartyIdParam, asset: AssetCode }), body: jsonBody(Body) },
  responses: { 200: json(UsageLimitsOut, "the limits in force"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id, asset } = c.req.valid("param");
    const b = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    const limits = await setUsageLimits(db, db.clock.now(), {
      marketplaceId: id, asset,
      maxGrossPerRecord: b.max_gross_per_record === undefined ? undefined : b.max_gross_per_record === null ? null : BigInt(b.max_gross_per_record),
      maxQuantityPerSecond: b.max_quantity_per_second, updatedBy: c.get("principal").keyId,
    });
    return c.json(usageLimitsOut(limits), 200);
  });
}
