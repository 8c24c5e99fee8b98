import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getAssetScales, getUsage } from "../../services/reads.js";
import { reverseUsage } from "../../services/reverse-usage.js";
import { proposeUsageReversal } from "../../services/proposals.js";
import { inTransaction } from "../../services/transaction.js";
import { LedgerError } from "../../domain/errors.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import { IdParam, Uuid } from "../schemas.js";
import { UsageRecordOut, usageOut } from "../usage-schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";

const Body = z
  .strictObject({
    reason: z
      .string()
      .min(1)
      .max(500)
      .regex(/^[^\u0000]*$/, "must not contain NUL characters")
      .openapi({ example: "duplicate meter reading" }),
  })
  .openapi("UsageReverse");

const route = createRoute({
  method: "post",
  path: "/v1/usage/{id}/reverse",
  operationId: "reverseUsage",
  tags: ["usage"],
  summary:
    "Correct a usage record with a reversal transfer (admin, its marketplace); an admin's that takes back earnings already paid out is a proposal another key approves (202)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { params: IdParam, headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: {
    201: json(z.object({ record: UsageRecordOut, reversal_transfer_id: Uuid }).openapi("UsageReversal"), "reversed"),
    202: json(ProposalOut, "an admin's reversal of earnings already paid out: a usage_reversal proposal, carried out when another key approves it"),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const { reason } = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    return replayOrRun(c, { reason }, async (ledgerKey, receipts) => {
      const usage = await getUsage(db, id);
      const p = c.get("principal");
      if (!usage || (p.role === "marketplace" && usage.marketplaceId !== p.scopeId)) throw new ApiError("usage_not_found", `usage record ${id} does not exist`);
      // Keyed by the request: a second reversal under another Idempotency-Key is 409 already_reversed.
      const idempotencyKey = ledgerKey(`usage-reverse:${usage.id}`);
      let reversed;
      try {
        reversed = await reverseUsage(db, { usage, reason, idempotencyKey, receipt: receipts.audited(201) });
      } catch (err) {
        // Earnings already paid out are taken back only on two keys' word (a receivable from the
        // operator, docs/ledger.md "Clawbacks"): an admin's reversal becomes a proposal another key
        // approves; a marketplace opens a dispute, which finance decides.
        if (!(err instanceof LedgerError) || err.code !== "exceeds_credits" || p.role !== "admin") throw err;
        const proposal = await inTransaction(db, (tx) => proposeUsageReversal(tx, db.clock.now(), p, usage, reason));
        return { status: 202, body: proposalOut(proposal) };
      }
      const { record, reversalId, replayed } = reversed;
      const scale = (await getAssetScales(db, [record.assetId])).get(record.assetId)!;
      return { status: 201, body: { record: usageOut(record, scale), reversal_transfer_id: reversalId }, receipt: replayed ? undefined : "audit" };
    }) as never;
  });
}
