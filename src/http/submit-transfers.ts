import type { Context } from "hono";
import { statusOf, type Transfer } from "../domain/posting.js";
import type { TransferResult } from "../services/context.js";
import type { TransferInput } from "../domain/transfers.js";
import { postTransfer, postTransfers, type DatedBy } from "../services/post-transfers.js";
import type { AppEnv } from "./request-context.js";
import { replayOrRun } from "./idempotency.js";
import { ApiError, problemBody } from "./problem.js";
import { assetScales, type Scales } from "./scales.js";
import { legAssets, transferOut } from "./serialize.js";

type Unkeyed = TransferInput extends infer T ? (T extends TransferInput ? Omit<T, "idempotencyKey"> : never) : never;

/**
 * Transfers are written by the ledger's batch writer (through the group committer for single
 * requests), which keeps its own idempotency keys in the same transaction as the transfer: the
 * ledger key is the tenant and the Idempotency-Key header (replayOrRun). A single transfer's answer
 * and audit row are written in the transaction that creates it; a batch's audit row too, its answer
 * after the commit (if the process dies in between, a retry is answered from the ledger's replay,
 * with the transfers as they were when created).
 */

/** As it was when created: a replay answers with the original body even if a hold has since been posted. */
const asCreated = (r: Extract<TransferResult, { ok: true }>): Transfer =>
  r.replayed ? { ...r.transfer, status: statusOf(r.transfer.kind, null, false) } : r.transfer;

/**
 * `known`: the scales of the assets the transfer can move, looked up before it is written, and
 * whether that is all of them. Then its answer is made in its transaction; otherwise (an account
 * the write will refuse as unknown) the answer is remembered after the commit.
 */
export async function submitTransfer(
  c: Context<AppEnv>,
  body: unknown,
  input: Unkeyed,
  known: { scales: Scales; complete: boolean },
  dated?: DatedBy,
): Promise<Response> {
  const deps = c.get("deps");
  return replayOrRun(c, body, async (ledgerKey, receipts) => {
    const receipt = known.complete ? receipts.answered(201, (t: Transfer) => transferOut(t, known.scales)) : receipts.audited<Transfer>(201);
    const result = await postTransfer(deps.ledger, { ...input, idempotencyKey: ledgerKey("http") } as TransferInput, receipt, dated);
    deps.metrics.transfersWritten.inc({ outcome: result.ok ? (result.replayed ? "replayed" : "created") : "refused" });
    if (!result.ok) throw ApiError.from(result.error);
    const scales = known.complete ? known.scales : await assetScales(deps.ledger.db, legAssets([result.transfer]));
    return { status: 201, body: transferOut(asCreated(result), scales), receipt: result.replayed ? undefined : known.complete ? "answer" : "audit" };
  });
}

/**
 * A batch in one database transaction; each item gets its own result. Items this key may not use
 * (`refused` up front) are answered as if the account did not exist.
 */
export async function submitTransferBatch(c: Context<AppEnv>, body: unknown, items: (Unkeyed | ApiError)[], dated: (DatedBy | null)[] = []): Promise<Response> {
  const deps = c.get("deps");
  return replayOrRun(c, body, async (ledgerKey, receipts) => {
    // Item i's key ends in "#i": the length prefixes keep it from spelling any single request's key.
    const inputs = items.flatMap((item, i) => (item instanceof ApiError ? [] : [{ ...item, idempotencyKey: `${ledgerKey("http")}#${i}` } as TransferInput]));
    const datedInputs = items.flatMap((item, i) => (item instanceof ApiError ? [] : [dated[i] ?? null]));
    const written = await postTransfers(deps.ledger, inputs, receipts.audited(200), datedInputs);
    const scales = await assetScales(deps.ledger.db, legAssets(written.flatMap((r) => (r.ok ? [r.transfer] : []))));
    let next = 0;
    const results = items.map((item) => {
      if (item instanceof ApiError) return { status: "refused" as const, error: problemBody(item.code, item.detail, item.errors) };
      const r = written[next++]!;
      deps.metrics.transfersWritten.inc({ outcome: r.ok ? (r.replayed ? "replayed" : "created") : "refused" });
      if (!r.ok) {
        const e = ApiError.from(r.error);
        return { status: "refused" as const, error: problemBody(e.code, e.detail, e.errors) };
      }
      return { status: "created" as const, transfer: transferOut(asCreated(r), scales) };
    });
    const changed = written.some((r) => r.ok && !r.replayed);
    return { status: 200, body: { results }, remember: results.every((r) => r.status === "created"), receipt: changed ? "audit" : undefined };
  });
}
