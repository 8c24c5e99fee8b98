import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { retireAsset } from "../../services/retire-asset.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { AssetCode } from "../money-schemas.js";
import type { AppEnv } from "../request-context.js";
import { Asset } from "../schemas.js";
import { assetOut } from "../serialize.js";
import { errorResponses, IdempotencyHeader, json, NoBody, security } from "./common.js";

const route = createRoute({
  method: "post",
  path: "/v1/assets/{code}/retire",
  operationId: "retireAsset",
  tags: ["ledger"],
  summary: "Retire an asset: no new accounts, transfers, usage, holds or prepaid deposits in it; its balances can still be paid out (admin)",
  description:
    "Final. Afterwards those requests are 409 asset_retired; what is in the asset stays readable, operators' payables are paid out, receipts are recorded, holds posted or voided, transfers reversed. Retiring it again answers it as retired.",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: { params: z.object({ code: AssetCode }), headers: IdempotencyHeader, body: NoBody },
  responses: { 200: json(Asset, "the asset, retired"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { code } = c.req.valid("param");
    const db = c.get("deps").ledger.db;
    return idempotently(c, {}, async (tx) => ({ status: 200, body: assetOut(await retireAsset(tx, { now: db.clock.now(), code })) })) as never;
  });
}
