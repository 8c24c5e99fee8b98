import { LedgerError } from "../domain/errors.js";
import { refuseRetiredAsset } from "../domain/assets.js";
import { customerRetired } from "../domain/customers.js";
import { uuidFromKey } from "../domain/ids.js";
import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { chart, specKey } from "../domain/chart.js";
import { getBalance } from "../db/queries/accounts.js";
import { getAssetByCode } from "../db/queries/assets.js";
import {
  listHoldRows,
  findHoldIdByOpenTransfer,
  getHoldRow,
  insertHold,
  listHoldsDueForClosing,
  markHoldClosed,
  recordHoldCloseTransfer,
  type HoldRow,
} from "../db/queries/holds.js";
import { writeTransfers } from "../db/transfer-writer.js";
import { writeReceipts, type WriteReceipt } from "../db/queries/write-receipts.js";
import { getCustomer } from "./marketplaces.js";

export interface Hold {
  id: string;
  marketplaceId: string;
  customerId: string;
  assetId: string;
  /** The asset's decimals, for display. */
  assetScale: number;
  amount: bigint;
  /** What is left in escrow (live from the ledger). */
  remaining: bigint;
  escrowAccountId: string;
  openTransferId: string;
  status: "open" | "closed" | "expired";
  expiresAt: Date | null;
  closedAt: Date | null;
  closeTransferId: string | null;
  createdAt: Date;
}

const maybeDate = (v: Date | string | null) => (v === null ? null : new Date(v));

async function toHold(db: Queryable, r: HoldRow): Promise<Hold> {
  return {
    id: r.id,
    marketplaceId: r.marketplace_id,
    customerId: r.customer_id,
    assetId: r.asset_id,
    assetScale: r.asset_scale,
    amount: BigInt(r.amount),
    remaining: (await getBalance(db, r.escrow_account_id))!.posted,
    escrowAccountId: r.escrow_account_id,
    openTransferId: r.open_transfer_id,
    status: r.status,
    expiresAt: maybeDate(r.expires_at),
    closedAt: maybeDate(r.closed_at),
    closeTransferId: r.close_transfer_id,
    createdAt: new Date(r.created_at),
  };
}

export async function getHold(db: Queryable, id: string): Promise<Hold | undefined> {
  const row = await getHoldRow(db, id);
  return row && toHold(db, row);
}

/** A page of holds by id, each as getHold reads it. */
export async function listHolds(db: Queryable, f: Parameters<typeof listHoldRows>[1]): Promise<Hold[]> {
  const rows = await listHoldRows(db, f);
  return Promise.all(rows.map((r) => toHold(db, r)));
}

/**
 * Reserves `amount` of a prepaid customer's funds: one ledger transfer customer → the hold's own
 * escrow account, written with the hold row in one transaction. Refused (exceeds_credits) when the
 * customer's available balance is short.
 */
export async function openHold(
  db: Database,
  input: {
    marketplaceId: string;
    customerId: string;
    asset: string;
    amount: bigint;
    timeoutSeconds?: number;
    idempotencyKey: string;
    /** The receipt of the API call that asked for it, written with the hold. */
    receipt?: WriteReceipt<void>;
  },
): Promise<Hold & { replayed: boolean }> {
  const customer = await getCustomer(db, input.marketplaceId, input.customerId);
  if (!customer)
    throw new LedgerError("customer_not_found", `customer ${input.customerId} does not exist`, [{ path: "customerId", message: "does not exist" }]);
  if (customer.billing !== "prepaid")
    throw new LedgerError("invalid_request", "holds reserve prepaid funds; this customer is postpaid", [{ path: "customerId", message: "is postpaid" }]);
  if (customer.retiredAt !== null) throw customerRetired(input.marketplaceId, input.customerId, customer.retiredAt);
  const asset = await getAssetByCode(db, input.asset);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${input.asset} does not exist`, [{ path: "asset", message: "does not exist" }]);
  refuseRetiredAsset(asset);
  // Derived from the request's key: a retry is the very same ledger request (same hold id, same
  // escrow account) and so replays, instead of conflicting with itself.
  const id = uuidFromKey(input.idempotencyKey);
  const from = chart.customer(asset.id, input.marketplaceId, input.customerId, true);
  const escrow = chart.holdEscrow(asset.id, input.marketplaceId, id, input.customerId);
  let accounts = new Map<string, string>();
  // The escrow account is opened in the same transaction, and a refusal rolls it back: a refused
  // hold leaves nothing behind.
  const prepare = async (tx: Queryable) => {
    accounts = await ensureAccounts(tx, [from, escrow]);
    return [
      {
        kind: "standard" as const,
        idempotencyKey: input.idempotencyKey,
        metadata: { hold: { id, customer_id: input.customerId } },
        legs: [{ debitAccountId: accounts.get(specKey(from))!, creditAccountId: accounts.get(specKey(escrow))!, amount: input.amount }],
      },
    ];
  };
  const [result] = await writeTransfers(db, prepare, {
    afterWrite: async (tx, [outcome], bookedAt) => {
      if (outcome?.kind === "refused") throw outcome.error;
      if (outcome?.kind !== "created") return;
      const expiresAt = input.timeoutSeconds === undefined ? null : new Date(bookedAt.getTime() + input.timeoutSeconds * 1000).toISOString();
      await insertHold(tx, {
        id,
        marketplaceId: input.marketplaceId,
        customerId: input.customerId,
        assetId: asset.id,
        amount: input.amount,
        escrowAccountId: accounts.get(specKey(escrow)),
        openTransferId: outcome.transfer.id,
        expiresAt,
        createdAt: bookedAt,
      });
    },
    receipt: input.receipt,
  });
  if (!result!.ok) throw result!.error;
  const holdId = await findHoldIdByOpenTransfer(db, result!.transfer.id);
  return { ...(await getHold(db, holdId!))!, replayed: result!.replayed };
}

/**
 * Closes an open hold: whatever is left in escrow goes back to the customer. The hold is marked
 * closed first (with the receipt of the API call that asked for it; `changed` is false when the
 * hold was closed already), so no new usage is planned against it; then the remainder is moved, re-read and
 * moved again if usage already in flight took some of it meanwhile (the escrow's no-overdraft limit
 * refuses the stale amount). Concurrent closes of one hold make the same ledger request (keyed by
 * the amount) and so move the remainder once. Closing a closed hold returns it as it is.
 */
export async function closeHold(
  db: Database,
  { id, reason = "closed", receipt }: { id: string; reason?: "closed" | "expired"; receipt?: WriteReceipt<void> },
): Promise<{ hold: Hold; changed: boolean }> {
  const hold = await getHold(db, id);
  if (!hold) throw new LedgerError("invalid_request", `hold ${id} does not exist`);
  const changed = await db.transaction(async (tx) => {
    const at = db.clock.now();
    const closed = await markHoldClosed(tx, id, reason, at);
    if (closed && receipt) await writeReceipts(tx, [{ receipt, result: undefined }], at);
    return closed;
  });
  const customer = chart.customer(hold.assetId, hold.marketplaceId, hold.customerId, true);
  const customerAccount = (await ensureAccounts(db, [customer])).get(specKey(customer))!;
  for (let attempt = 0; attempt < 10; attempt++) {
    const escrow = (await getBalance(db, hold.escrowAccountId))!;
    const left = escrow.posted;
    if (left === 0n) break;
    // Keyed by the escrow's totals: concurrent closes that saw the same state move it once, and a
    // later sweep (after a refund into the escrow) is a new request.
    const [r] = await writeTransfers(db, [
      {
        // No reason in the request: a user's close and the expirer's that saw the same escrow make the
        // same request, and one replays the other (the reason is on the hold row).
        kind: "standard",
        idempotencyKey: `hold-close:${id}:${escrow.debitsPosted}:${escrow.creditsPosted}`,
        metadata: { hold: { id, close: true } },
        legs: [{ debitAccountId: hold.escrowAccountId, creditAccountId: customerAccount, amount: left }],
      },
    ]);
    if (r!.ok) {
      // The first close transfer stays referenced; later sweeps (see reverseUsage) are in the ledger.
      await recordHoldCloseTransfer(db, id, r!.transfer.id);
      continue; // re-read: zero unless more arrived, which cannot happen once closed
    }
    if (r!.error.code !== "exceeds_credits") throw r!.error;
  }
  return { hold: (await getHold(db, id))!, changed };
}

/**
 * Closes the open holds whose time is up, and finishes closes that a crash interrupted (a hold
 * marked closed whose escrow still holds funds); returns how many holds it acted on.
 */
export async function expireUsageHolds(db: Database, limit = 100): Promise<number> {
  const due = await listHoldsDueForClosing(db, limit, db.clock.now());
  for (const h of due) await closeHold(db, { id: h.id, reason: h.status === "open" ? "expired" : h.status });
  return due.length;
}
