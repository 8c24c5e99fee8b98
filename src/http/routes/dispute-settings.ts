import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { MAX_DISPUTE_WINDOW_DAYS } from "../../domain/disputes.js";
import { getDisputeWindow, setDisputeWindow, type DisputeWindow } from "../../services/disputes.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { MarketplaceId } from "./party-schemas.js";

const Settings = z
  .object({
    marketplace_id: z.string(),
    dispute_window_days: z.number().int().openapi({ description: "a usage record may be disputed until this many days after it was booked (its created_at)" }),
    default: z.boolean().openapi({ description: "true: no admin set it, the service's default applies" }),
    updated_by: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .openapi("DisputeSettings");

const settingsOut = (s: DisputeWindow): z.infer<typeof Settings> => ({
  marketplace_id: s.marketplaceId,
  dispute_window_days: s.days,
  default: s.isDefault,
  updated_by: s.updatedBy,
  updated_at: s.updatedAt?.toISOString() ?? null,
});

const Params = z.object({ id: MarketplaceId });

const get = createRoute({
  method: "get",
  path: "/v1/marketplaces/{id}/dispute-settings",
  operationId: "getDisputeSettings",
  tags: ["disputes"],
  summary: "A marketplace's dispute window (admin, finance, the marketplace)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace")] as const,
  request: { params: Params },
  responses: { 200: json(Settings, "its dispute settings"), ...errorResponses },
});

const put = createRoute({
  method: "put",
  path: "/v1/marketplaces/{id}/dispute-settings",
  operationId: "setDisputeSettings",
  tags: ["disputes"],
  summary: "Set a marketplace's dispute window: how long after booking its usage may be disputed (admin)",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: {
    params: Params,
    body: jsonBody(
      z
        .strictObject({
          dispute_window_days: z
            .number()
            .int()
            .min(0)
            .max(MAX_DISPUTE_WINDOW_DAYS)
            .openapi({ description: `0 to ${MAX_DISPUTE_WINDOW_DAYS}; 0: no record may be disputed`, example: 90 }),
        })
        .openapi("DisputeSettingsSet"),
    ),
  },
  responses: { 200: json(Settings, "its dispute settings"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(get, async (c) => {
    const { id } = c.req.valid("param");
    const p = c.get("principal");
    const s = p.role === "marketplace" && p.scopeId !== id ? undefined : await getDisputeWindow(c.get("deps").ledger.db, id);
    if (!s) throw new ApiError("marketplace_not_found", `marketplace ${id} does not exist`);
    return c.json(settingsOut(s), 200);
  });
  app.openapi(put, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    return idempotently(c, body, async (tx) => ({
      status: 200,
      body: settingsOut(await setDisputeWindow(tx, { marketplaceId: id, days: body.dispute_window_days, by: c.get("principal").keyId, now: db.clock.now() })),
    })) as never;
  });
}
