import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { createAsset } from "../../services/create-asset.js";
import { requireRole } from "../auth.js";
import { jsonBodyGuard } from "../json-body.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { Asset } from "../schemas.js";
import { assetOut } from "../serialize.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";

const Body = z
  .strictObject({
    code: z.string().openapi({ example: "USDC-8453" }),
    scale: z.number().int().openapi({ description: "decimals: 6 for USDC, 18 for ETH", example: 6 }),
    settlement: z.discriminatedUnion("kind", [
      z.strictObject({ kind: z.literal("erc20"), chain_id: z.number().int(), token_address: z.string() }),
      z.strictObject({ kind: z.literal("native"), chain_id: z.number().int() }),
      z.strictObject({ kind: z.literal("offchain") }),
    ]),
    rate_max_age_seconds: z.number().int().optional().openapi({
      description: "conversions into or out of the asset use no rate observed longer ago than this, 1 to 31536000 (default 3600; docs/settlement.md)",
      example: 3600,
    }),
    rate_max_deviation_bps: z
      .number()
      .int()
      .optional()
      .openapi({ description: "conversions stop while two fresh sources of its rate are further apart than this, 0 to 10000 (default 100)", example: 100 }),
  })
  .openapi("AssetCreate");

const route = createRoute({
  method: "post",
  path: "/v1/assets",
  operationId: "createAsset",
  tags: ["ledger"],
  summary: "Register an asset (admin)",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(Asset, "registered (or the identical asset, already registered)"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const s = body.settlement;
    return idempotently(c, body, async (tx) => {
      const asset = await createAsset(tx, {
        code: body.code,
        scale: body.scale,
        settlement:
          s.kind === "erc20"
            ? { kind: "erc20", chainId: s.chain_id, tokenAddress: s.token_address }
            : s.kind === "native"
              ? { kind: "native", chainId: s.chain_id }
              : { kind: "offchain" },
        ...(body.rate_max_age_seconds === undefined ? {} : { rateMaxAgeSeconds: body.rate_max_age_seconds }),
        ...(body.rate_max_deviation_bps === undefined ? {} : { rateMaxDeviationBps: body.rate_max_deviation_bps }),
      });
      return { status: 201, body: assetOut(asset) };
    }) as never;
  });
}
