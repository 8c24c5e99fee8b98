import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { proposeAdjustment } from "../../services/proposals.js";
import { getAssetScales } from "../../services/reads.js";
import { getItem, getReconciliation, resolveItem } from "../../services/reconcile.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { idempotently, replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import { Amount } from "../money-schemas.js";
import { Uuid } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { ItemView, itemView } from "./reconciliation-schemas.js";

const Body = z
  .strictObject({
    note: z.string().min(1).max(2000).openapi({ description: "why the item is settled" }),
    adjustment: z.strictObject({ debit_account_id: Uuid, credit_account_id: Uuid, amount: Amount }).optional().openapi({
      description:
        "an adjusting transfer recorded with the resolution (e.g. treasury funding: debit the treasury, credit equity); it is a proposal: the item is resolved when another key approves it (POST /v1/proposals/{id}/approve)",
    }),
  })
  .openapi("ReconciliationItemResolve");

const route = createRoute({
  method: "post",
  path: "/v1/reconciliations/{id}/items/{item_id}/resolve",
  operationId: "resolveReconciliationItem",
  tags: ["reconciliation"],
  summary: "Resolve an item with a note, or propose an adjusting transfer that another key approves; recorded and audited (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance"), jsonBodyGuard] as const,
  request: {
    params: z.object({
      id: Uuid.openapi({ param: { name: "id", in: "path" } }),
      item_id: z
        .string()
        .regex(/^[0-9]{1,18}$/, "must be an item id")
        .openapi({ param: { name: "item_id", in: "path" }, example: "1042" }),
    }),
    headers: IdempotencyHeader,
    body: jsonBody(Body),
  },
  responses: {
    200: json(
      ItemView.extend({
        proposal_id: z.string().nullable().openapi({ description: "with an adjustment: the proposal that resolves the item once approved" }),
      }).openapi("ReconciliationItemResolved"),
      "the item: resolved, or (with an adjustment) still open with the proposal that will resolve it",
    ),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id, item_id } = c.req.valid("param");
    const body = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    const run = await getReconciliation(db, id);
    if (!run) throw new ApiError("reconciliation_not_found", `reconciliation ${id} does not exist`);
    // The item's amounts are in the run's asset.
    const scale = (await getAssetScales(db, [run.assetId])).get(run.assetId)!;
    const a = body.adjustment;
    if (a) {
      // Money moves on two people's word: the adjustment waits for another key's approval.
      return idempotently(c, body, async (tx) => {
        const p = await proposeAdjustment(tx, {
          now: db.clock.now(),
          by: c.get("principal"),
          runId: id,
          itemId: BigInt(item_id),
          note: body.note,
          adjustment: { debitAccountId: a.debit_account_id, creditAccountId: a.credit_account_id, amount: BigInt(a.amount) },
        });
        return { status: 200, body: { ...itemView((await getItem(tx, BigInt(item_id)))!, scale), proposal_id: p.id } };
      }) as never;
    }
    return replayOrRun(c, body, async (_, receipts) => {
      const item = await resolveItem(db, {
        runId: id,
        itemId: BigInt(item_id),
        note: body.note,
        resolvedBy: c.get("principal").keyId,
        receipt: receipts.audited(200),
      });
      return { status: 200, body: { ...itemView(item, scale), proposal_id: null }, receipt: "audit" };
    }) as never;
  });
}
