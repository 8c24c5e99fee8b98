import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getCapacityPolicies, Resource, setCapacityPolicies, type CapacityPolicies } from "../../services/capacity.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { canReadMarketplace } from "../tenancy.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { MarketplaceId } from "./party-schemas.js";

const Policy = z.enum(["refuse", "flag"]).openapi({ description: "refuse: 422 capacity_exceeded; flag: accepted, listed for review", example: "refuse" });

const Policies = z
  .object({
    marketplace_id: z.string(),
    default: Policy.openapi({ description: "for every resource not named in `resources` (refuse unless set)" }),
    resources: z.record(z.string(), Policy).openapi({ example: { "gpu:rtx4090": "flag" } }),
    updated_by: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .openapi("CapacityPolicy");

const policiesOut = (p: CapacityPolicies): z.infer<typeof Policies> => ({
  marketplace_id: p.marketplaceId,
  default: p.default,
  resources: p.resources,
  updated_by: p.updatedBy,
  updated_at: p.updatedAt?.toISOString() ?? null,
});

const Params = z.object({ id: MarketplaceId });

const get = createRoute({
  method: "get",
  path: "/v1/marketplaces/{id}/capacity-policy",
  operationId: "getCapacityPolicy",
  tags: ["usage"],
  summary: "What a marketplace does with usage beyond an operator's declared capacity (admin, finance, the marketplace)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { params: Params },
  responses: { 200: json(Policies, "its policy"), ...errorResponses },
});

const put = createRoute({
  method: "put",
  path: "/v1/marketplaces/{id}/capacity-policy",
  operationId: "setCapacityPolicy",
  tags: ["usage"],
  summary: "Set what a marketplace does with usage beyond capacity, per resource: refuse it or accept it flagged (the marketplace, admin)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: {
    params: Params,
    body: jsonBody(
      z
        .strictObject({
          default: Policy,
          resources: z
            .record(Resource, Policy)
            .refine((r) => Object.keys(r).length <= 1000, "at most 1000 resources")
            .optional(),
        })
        .openapi("CapacityPolicySet"),
    ),
  },
  responses: { 200: json(Policies, "its policy"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(get, async (c) => {
    const { id } = c.req.valid("param");
    const p = canReadMarketplace(c, id) ? await getCapacityPolicies(c.get("deps").ledger.db, id) : undefined;
    if (!p) throw new ApiError("marketplace_not_found", `marketplace ${id} does not exist`);
    return c.json(policiesOut(p), 200);
  });
  app.openapi(put, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    if (!canReadMarketplace(c, id)) throw new ApiError("marketplace_not_found", `marketplace ${id} does not exist`);
    const db = c.get("deps").ledger.db;
    return idempotently(c, body, async (tx) => ({
      status: 200,
      body: policiesOut(
        await setCapacityPolicies(tx, {
          marketplaceId: id,
          default: body.default,
          resources: body.resources ?? {},
          by: c.get("principal").keyId,
          now: db.clock.now(),
        }),
      ),
    })) as never;
  });
}
