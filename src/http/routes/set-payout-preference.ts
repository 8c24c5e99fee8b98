import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { preferenceHistory, setPayoutPreference, type PayoutPreference } from "../../services/payout-preferences.js";
import { getAssetByCode } from "../../services/reads.js";
import { withArticle } from "../../domain/access.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { AssetCode } from "../money-schemas.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { PayoutPreferenceOut, preferenceOut } from "./conversion-schemas.js";
import { visibleOperator } from "./operator-access.js";
import { OperatorId } from "./party-schemas.js";

const Body = z
  .strictObject({
    splits: z
      .array(
        z.strictObject({
          asset: AssetCode.openapi({ description: "an asset to be paid in: the earnings asset itself, or one a rate converts it into", example: "TUSD" }),
          bps: z.number().int().min(1).max(10_000).openapi({ description: "its share, in basis points", example: 7000 }),
        }),
      )
      .min(1)
      .max(5)
      .openapi({ description: "1 to 5 assets, each once, their bps adding up to 10,000" }),
  })
  .openapi("PayoutPreferenceSet");

/** Where an operator is paid is the operator's own choice: no platform or marketplace key sets it. */
const operatorOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { role } = c.get("principal");
  if (role !== "operator") {
    throw new ApiError("forbidden", `only the operator's own key sets where it is paid, not ${withArticle(role)} key`);
  }
  await next();
};

/** Whether the splits asked for are those of the preference, in the same order. */
const sameSplits = (p: PayoutPreference, splits: Array<{ asset: string; bps: number }>) =>
  p.splits.length === splits.length && p.splits.every((s, i) => s.asset === splits[i]!.asset && s.bps === splits[i]!.bps);

const route = createRoute({
  method: "put",
  path: "/v1/operators/{id}/payout-preferences/{asset}",
  operationId: "setPayoutPreference",
  tags: ["payouts"],
  summary: "Set the assets the operator's earnings in an asset are paid in, split by basis points (the operator's own key only)",
  description:
    "Each change is a new version (the preference in force asked for again changes nothing); payouts requested after it are converted into its assets at the rate of the moment (settlement `convert`), " +
    "payouts requested before keep the version they were requested with. Every split's asset must be paid out by this service (to an address " +
    "the operator verified on its chain, for an on-chain asset) and priced against the earnings asset (a price feed, or a rate finance entered: POST /v1/rates).",
  security,
  middleware: [operatorOnly, jsonBodyGuard] as const,
  request: { params: z.object({ id: OperatorId, asset: AssetCode }), body: jsonBody(Body) },
  responses: { 200: json(PayoutPreferenceOut, "the preference in force, with its history"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id, asset } = c.req.valid("param");
    const body = c.req.valid("json");
    await visibleOperator(c, id);
    const deps = c.get("deps");
    return idempotently(c, body, async (tx) => {
      // A PUT states what should be: the preference in force asked for again changes nothing.
      const earnings = await getAssetByCode(tx, asset);
      const history = earnings ? await preferenceHistory(tx, id, earnings.id) : [];
      if (history[0] && sameSplits(history[0], body.splits)) return { status: 200, body: preferenceOut(history) };
      const set = await setPayoutPreference(tx, deps.settlements, {
        now: deps.ledger.db.clock.now(),
        by: c.get("principal").keyId,
        requestId: c.get("requestId") ?? null,
        operatorId: id,
        asset,
        splits: body.splits,
      });
      return { status: 200, body: preferenceOut(await preferenceHistory(tx, id, set.assetId)) };
    }) as never;
  });
}
