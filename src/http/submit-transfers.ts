import type { Context } from "hono";
import { statusOf, type Transfer } from "../db/queries/transfers.js";
import type { TransferResult } from "../db/transfer-writer.js";
import type { TransferInput } from "../domain/transfers.js";
import { postTransfer, postTransfers } from "../services/post-transfers.js";
import type { AppEnv } from "./env.js";
import { idempotentRequest, storeResponse, storedResponse, type IdempotentRequest } from "./idempotency.js";
import { ApiError, problemBody } from "./problem.js";
import { transferOut } from "./serialize.js";

type Unkeyed = TransferInput extends infer T ? (T extends TransferInput ? Omit<T, "idempotencyKey"> : never) : never;

/**
 * Transfers are written by the ledger's batch writer (through the group committer for single
 * requests), which keeps its own idempotency keys in the same transaction as the transfer: the
 * ledger key is the tenant and the Idempotency-Key header. The HTTP response is stored after the
 * commit; if the process dies in between, a retry is answered from the ledger's replay, with the
 * transfer as it was when created.
 */
// Length-prefixed parts, so that no header key of one request can spell another's ledger key
// (e.g. a single request with key "K|0" against item 0 of a batch with key "K").
const ledgerKey = (req: IdempotentRequest, item?: number) =>
  `http:${req.scope.length}:${req.scope}:${req.key.length}:${req.key}${item === undefined ? "" : `#${item}`}`;

/** As it was when created: a replay answers with the original body even if a hold has since been posted. */
const asCreated = (r: Extract<TransferResult, { ok: true }>): Transfer =>
  r.replayed ? { ...r.transfer, status: statusOf(r.transfer.kind, null, false) } : r.transfer;

export async function submitTransfer(c: Context<AppEnv>, body: unknown, input: Unkeyed): Promise<Response> {
  const req = idempotentRequest(c, body);
  const deps = c.get("deps");
  const replay = await storedResponse(deps.ledger.db, req);
  if (replay) return replay;
  const result = await postTransfer(deps.ledger, { ...input, idempotencyKey: ledgerKey(req) } as TransferInput);
  deps.metrics.transfersWritten.inc({ outcome: result.ok ? (result.replayed ? "replayed" : "created") : "refused" });
  if (!result.ok) throw ApiError.from(result.error);
  const out = transferOut(asCreated(result));
  await storeResponse(deps.ledger.db, req, 201, out);
  return c.json(out, 201);
}

/**
 * A batch in one database transaction; each item gets its own result. Items this key may not use
 * (`refused` up front) are answered as if the account did not exist.
 */
export async function submitTransferBatch(
  c: Context<AppEnv>,
  body: unknown,
  items: (Unkeyed | ApiError)[],
): Promise<Response> {
  const req = idempotentRequest(c, body);
  const deps = c.get("deps");
  const replay = await storedResponse(deps.ledger.db, req);
  if (replay) return replay;
  const inputs = items.flatMap((item, i) => (item instanceof ApiError ? [] : [{ ...item, idempotencyKey: ledgerKey(req, i) } as TransferInput]));
  const written = await postTransfers(deps.ledger, inputs);
  let next = 0;
  const results = items.map((item) => {
    if (item instanceof ApiError) return { status: "refused" as const, error: problemBody(item.code, item.detail, item.errors) };
    const r = written[next++]!;
    deps.metrics.transfersWritten.inc({ outcome: r.ok ? (r.replayed ? "replayed" : "created") : "refused" });
    return r.ok
      ? { status: "created" as const, transfer: transferOut(asCreated(r)) }
      : { status: "refused" as const, error: problemBody(r.error.code, r.error.message, r.error.issues) };
  });
  const out = { results };
  await storeResponse(deps.ledger.db, req, 200, out);
  return c.json(out, 200);
}
