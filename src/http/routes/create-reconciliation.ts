import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getReconciliation, runReconciliation } from "../../services/reconcile.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { AssetCode } from "../money-schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { ChainId } from "./payout-schemas.js";
import { ReconciliationOut, runOut } from "./reconciliation-schemas.js";

const Block = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const Body = z.strictObject({ chain_id: ChainId, asset: AssetCode, from_block: Block, to_block: Block }).openapi("ReconciliationCreate");

const route = createRoute({
  method: "post",
  path: "/v1/reconciliations",
  operationId: "createReconciliation",
  tags: ["reconciliation"],
  summary: "Reconcile a chain's payouts and inbound transfers of an asset over a block range with the ledger (admin, finance)",
  security,
  description:
    "Reads the vault's Paid events and the token's transfers into the treasury in chunks, credits registered customers' deposits (once), and stores each item as matched, missing_on_chain, unexpected_on_chain, amount_mismatch or recipient_mismatch. A rerun over the same range gives the same items.",
  middleware: [requireRole("admin", "finance"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(ReconciliationOut, "the run and its summary; GET it for the items"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const deps = c.get("deps");
    return replayOrRun(c, body, async (_, receipts) => {
      const id = await runReconciliation(deps.ledger.db, deps.settlements, {
        chainId: BigInt(body.chain_id),
        asset: body.asset,
        fromBlock: BigInt(body.from_block),
        toBlock: BigInt(body.to_block),
        requestedBy: c.get("principal").keyId,
        receipt: receipts.audited(201),
      });
      return { status: 201, body: runOut((await getReconciliation(deps.ledger.db, id))!), receipt: "audit" };
    }) as never;
  });
}
