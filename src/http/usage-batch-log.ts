import type { LoggedResult, AssetTotal } from "../services/ingest-usage.js";
import type { NewUsageBatch } from "../services/usage-batches.js";
import { ApiError } from "./problem.js";

/** What a usage batch's log is made of besides its results: its id, marketplace, Idempotency-Key and whose it is, when it came and its records as sent. */
export interface BatchLogContext {
  id: string;
  marketplaceId: string;
  /** The Idempotency-Key as sent. */
  idempotencyKey: string | null;
  /** The tenant of the key that sent it (tenantOf): its Idempotency-Keys are its own. */
  tenant: string;
  receivedAt: Date;
  records: unknown[];
}

/** The external id of a record as sent, when it is a usable one (a string of at most 200 characters). */
export function sentExternalId(raw: unknown): string | undefined {
  const id = (raw as { external_id?: unknown } | null)?.external_id;
  return typeof id === "string" && id.length <= 200 ? id : undefined;
}

/** The log of a batch from each record's result (by its place in `records`): counts, totals, and each refusal's code, reason and first field as the answer gives them. */
export function batchLogOf(ctx: BatchLogContext, results: LoggedResult[], totals: AssetTotal[]): NewUsageBatch {
  const counts = { accepted: 0, duplicate: 0, rejected: 0 };
  const rejections: NewUsageBatch["rejections"] = [];
  results.forEach((r, index) => {
    counts[r.status]++;
    if (r.status !== "rejected") return;
    const problem = ApiError.from(r.error);
    rejections.push({
      record_index: index,
      external_id: sentExternalId(ctx.records[index]) ?? null,
      code: problem.code,
      reason: problem.detail,
      field: problem.errors[0]?.path ?? null,
    });
  });
  return {
    id: ctx.id,
    marketplace_id: ctx.marketplaceId,
    idempotency_key: ctx.idempotencyKey,
    tenant: ctx.tenant,
    receivedAt: ctx.receivedAt,
    records: results.length,
    ...counts,
    totals,
    rejections,
  };
}
