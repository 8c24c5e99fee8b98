import type { Database } from "../db/client.js";
import { GroupCommitter, type GroupCommitOptions } from "../db/group-commit.js";
import type { ReplicaRouter } from "../db/replica.js";
import { createdTransfer, writeTransfers, type AfterWrite, type TransferResult } from "../db/transfer-writer.js";
import { writeReceipts, type WriteReceipt } from "../db/queries/write-receipts.js";
import type { Transfer } from "../domain/posting.js";
import type { TransferInput } from "../domain/transfers.js";
import { createAuditWriter, type AuditEntry } from "./audit-log.js";
import { createResponseWriter, type StoredResponse } from "./response-store.js";
import { ingestUsage, type UsageItem, type UsageResult } from "./ingest-usage.js";

export type { Database, Queryable } from "../db/client.js";
export { isDatabaseUnavailable } from "../db/client.js";
export { pendingMigrations } from "../db/migrate.js";
export type { TransferResult } from "../db/transfer-writer.js";
export type { WriteReceipt } from "../db/queries/write-receipts.js";

/** One transfer request for the group committer, with the receipt of the API call that made it. */
export interface TransferSubmission {
  input: TransferInput;
  receipt?: WriteReceipt<Transfer>;
}

/** What every use case runs against: the database and the group-commit batchers of its hot writes. */
export interface LedgerContext {
  db: Database;
  transfers: GroupCommitter<TransferSubmission, TransferResult>;
  /** Single usage records, coalesced into set-based ingest batches. */
  usage: GroupCommitter<UsageItem, UsageResult>;
  /** The audit log of mutating API calls. */
  audit: GroupCommitter<AuditEntry, void>;
  /** Responses remembered for their Idempotency-Key after a ledger write (group-committed). */
  responses: GroupCommitter<StoredResponse, void>;
  /** A streaming replica for balance reads, statements, earnings and reports (DATABASE_REPLICA_URL; services/read-source.ts). */
  reads?: ReplicaRouter;
}

export const defaultGroupCommit: GroupCommitOptions = { maxItems: 1000, maxConcurrent: 4, windowMs: 0 };

/**
 * `usageMaxConcurrent`: the single usage records' batches in flight at once (default: as the other
 * committers). Every usage batch locks the protocol's fee account, and its marketplace's, at the end
 * of its transaction, so batches in flight at once queue there and each one is smaller; the service
 * runs two at a time (one prepares while the other commits) unless told otherwise
 * (USAGE_COMMIT_MAX_CONCURRENT, docs/performance.md).
 */
export function createLedgerContext(db: Database, groupCommit: Partial<GroupCommitOptions> & { usageMaxConcurrent?: number } = {}): LedgerContext {
  const { usageMaxConcurrent, ...rest } = groupCommit;
  const options = { ...defaultGroupCommit, ...rest };
  // PGlite has a single connection: concurrent flushes would only queue behind each other.
  if (db.kind === "pglite") options.maxConcurrent = 1;
  const usageOptions = { ...options, maxConcurrent: db.kind === "pglite" ? 1 : (usageMaxConcurrent ?? options.maxConcurrent) };
  return {
    db,
    transfers: new GroupCommitter(
      (items) =>
        writeTransfers(
          db,
          items.map((i) => i.input),
          { optimistic: true, afterWrite: receiptsOf(items) },
        ),
      options,
    ),
    usage: new GroupCommitter((items) => ingestUsage(db, items), usageOptions),
    audit: createAuditWriter(db),
    responses: createResponseWriter(db),
  };
}

/** Writes the receipts of the submissions whose transfer the batch created, in the batch's transaction. */
export function receiptsOf(items: TransferSubmission[]): AfterWrite | undefined {
  if (!items.some((i) => i.receipt)) return undefined;
  return (tx, outcomes, bookedAt) =>
    writeReceipts(
      tx,
      items.flatMap((item, k) => {
        const o = outcomes[k]!;
        return item.receipt && o.kind === "created" ? [{ receipt: item.receipt, result: createdTransfer(o, bookedAt) }] : [];
      }),
      bookedAt,
    );
}

/** Flushes the batchers and waits for their last commits. */
export async function closeLedgerContext(ctx: LedgerContext): Promise<void> {
  await Promise.all([ctx.usage.close(), ctx.transfers.close()]);
  await ctx.responses.close();
  await ctx.audit.close();
}
