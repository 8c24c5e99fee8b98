import type { Database } from "../db/client.js";
import { GroupCommitter, type GroupCommitOptions } from "../db/group-commit.js";
import { writeTransfers, type TransferResult } from "../db/transfer-writer.js";
import type { TransferInput } from "../domain/transfers.js";

/** What every use case runs against: the database and the group-commit batcher of transfers. */
export interface LedgerContext {
  db: Database;
  transfers: GroupCommitter<TransferInput, TransferResult>;
}

export const defaultGroupCommit: GroupCommitOptions = { maxItems: 1000, maxConcurrent: 4, windowMs: 0 };

export function createLedgerContext(db: Database, groupCommit: Partial<GroupCommitOptions> = {}): LedgerContext {
  const options = { ...defaultGroupCommit, ...groupCommit };
  // PGlite has a single connection: concurrent flushes would only queue behind each other.
  if (db.kind === "pglite") options.maxConcurrent = 1;
  return { db, transfers: new GroupCommitter((items) => writeTransfers(db, items), options) };
}
