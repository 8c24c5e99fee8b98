import { LedgerError } from "../../domain/errors.js";
import { bookingOnAccounts } from "../../services/periods.js";
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { requireRole } from "../auth.js";
import { jsonBodyGuard } from "../json-body.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { Transfer } from "../schemas.js";
import { submitTransfer, submitTransferBatch } from "../submit-transfers.js";
import { accountsInRetiredAssets } from "../../services/retire-asset.js";
import { accountScales } from "../scales.js";
import { unusableAccounts } from "../visibility.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { TransferBatchIn, TransferBatchOut, TransferIn } from "./transfer-schemas.js";

const route = createRoute({
  method: "post",
  path: "/v1/transfers",
  operationId: "createTransfer",
  tags: ["ledger"],
  summary: "Record a transfer, or a batch of up to 1,000 (admin, marketplace)",
  description:
    'A single transfer answers 201 with the transfer or a problem. A batch ({"transfers": [...]}) is written in one database transaction and answers 200 with one result per item, in order.',
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(z.union([TransferIn, TransferBatchIn])) },
  responses: { 201: json(Transfer, "recorded"), 200: json(TransferBatchOut, "batch: one result per item"), ...errorResponses },
});

type TransferBody = z.infer<typeof TransferIn>;

const toInput = (t: TransferBody) => ({
  kind: t.type,
  id: t.id,
  legs: t.legs.map((l) => ({ debitAccountId: l.debit_account_id, creditAccountId: l.credit_account_id, amount: BigInt(l.amount) })),
  timeoutSeconds: t.timeout_seconds,
  effectiveAt: t.effective_at === undefined ? undefined : new Date(t.effective_at),
  metadata: t.metadata,
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const list = "transfers" in body ? body.transfers : [body];
    const unusable = await unusableAccounts(
      c,
      list.flatMap((t) => t.legs.flatMap((l) => [l.debit_account_id, l.credit_account_id])),
    );
    const retired = await accountsInRetiredAssets(
      c.get("deps").ledger.db,
      list.flatMap((t) => t.legs.flatMap((l) => [l.debit_account_id, l.credit_account_id])),
    );
    // An explicit effective time must not fall in a closed or closing period of the accounts' marketplaces.
    const dated = await Promise.all(
      list.map((t) =>
        t.effective_at === undefined
          ? null
          : bookingOnAccounts(
              c.get("deps").ledger.db,
              t.legs.flatMap((l) => [l.debit_account_id, l.credit_account_id]),
              new Date(t.effective_at),
              true,
            ).then(
              () => null,
              (err: unknown) => {
                if (err instanceof LedgerError) return ApiError.from(err);
                throw err;
              },
            ),
      ),
    );
    const checked = list.map((t, k) => {
      if (dated[k]) return dated[k];
      const ids = t.legs.flatMap((l) => [l.debit_account_id, l.credit_account_id]);
      const bad = ids.find((id) => unusable.has(id));
      if (bad === undefined) {
        // A retired asset takes no new transfers (its holds are still posted or voided, its transfers reversed).
        const inRetired = ids.find((id) => retired.has(id));
        return inRetired === undefined ? toInput(t) : ApiError.from(retired.get(inRetired)!);
      }
      const why = unusable.get(bad)!;
      return why.reason === "reserved"
        ? new ApiError(
            "forbidden",
            `account ${bad} (${why.account.ref}) is one of the service's own accounts: money moves on it only through the service's routes (deposits, usage, holds, payouts)`,
          )
        : new ApiError("account_not_found", `account ${bad} does not exist`);
    });
    // Judged again in the write's transaction, under the marketplaces' funding locks.
    const datedBy = list.map((t) =>
      t.effective_at === undefined
        ? null
        : { accounts: t.legs.flatMap((l) => [l.debit_account_id, l.credit_account_id]), at: new Date(t.effective_at), explicit: true },
    );
    if ("transfers" in body) return submitTransferBatch(c, body, checked, datedBy) as never;
    if (checked[0] instanceof ApiError) throw checked[0];
    const known = await accountScales(
      c.get("deps").ledger.db,
      list[0]!.legs.flatMap((l) => [l.debit_account_id, l.credit_account_id]),
    );
    return submitTransfer(c, body, checked[0]!, known, datedBy[0] ?? undefined) as never;
  });
}
