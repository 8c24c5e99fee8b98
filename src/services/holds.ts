import { LedgerError } from "../domain/errors.js";
import { uuidFromKey } from "../domain/ids.js";
import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { chart, specKey } from "../domain/chart.js";
import { getBalance } from "../db/queries/accounts.js";
import { getAssetByCode } from "../db/queries/assets.js";
import { writeTransfers } from "../db/transfer-writer.js";
import { getCustomer } from "./marketplaces.js";

export interface Hold {
  id: string;
  marketplaceId: string;
  customerId: string;
  assetId: string;
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

type Row = {
  id: string; marketplace_id: string; customer_id: string; asset_id: string; amount: string; escrow_account_id: string;
  open_transfer_id: string; status: Hold["status"]; expires_at: Date | string | null; closed_at: Date | string | null;
  close_transfer_id: string | null; created_at: Date | string;
};

const maybeDate = (v: Date | string | null) => (v === null ? null : new Date(v));

async function toHold(db: Queryable, r: Row): Promise<Hold> {
  return {
    id: r.id, marketplaceId: r.marketplace_id, customerId: r.customer_id, assetId: r.asset_id, amount: BigInt(r.amount),
    remaining: (await getBalance(db, r.escrow_account_id))!.posted, escrowAccountId: r.escrow_account_id,
    openTransferId: r.open_transfer_id, status: r.status, expiresAt: maybeDate(r.expires_at), closedAt: maybeDate(r.closed_at),
    closeTransferId: r.close_transfer_id, createdAt: new Date(r.created_at),
  };
}

export async function getHold(db: Queryable, id: string): Promise<Hold | undefined> {
  const rows = await db.query<Row>("select * from holds where id = $1", [id]);
  return rows[0] && toHold(db, rows[0]);
}

/**
 * Reserves `amount` of a prepaid customer's funds: one ledger transfer customer → the hold's own
 * escrow account, written with the hold row in one transaction. Refused (exceeds_credits) when the
 * customer's available balance is short.
 */
export async function openHold(
  db: Database,
  input: { marketplaceId: string; customerId: string; asset: string; amount: bigint; timeoutSeconds?: number; idempotencyKey: string },
): Promise<Hold> {
  const customer = await getCustomer(db, input.marketplaceId, input.customerId);
  if (!customer) throw new LedgerError("customer_not_found", `customer ${input.customerId} does not exist`, [{ path: "customerId", message: "does not exist" }]);
  if (customer.billing !== "prepaid") throw new LedgerError("invalid_request", "holds reserve prepaid funds; this customer is postpaid", [{ path: "customerId", message: "is postpaid" }]);
  const asset = await getAssetByCode(db, input.asset);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${input.asset} does not exist`, [{ path: "asset", message: "does not exist" }]);
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
    return [{
      kind: "standard" as const,
      idempotencyKey: input.idempotencyKey,
      metadata: { hold: { id, customer_id: input.customerId } },
      legs: [{ debitAccountId: accounts.get(specKey(from))!, creditAccountId: accounts.get(specKey(escrow))!, amount: input.amount }],
    }];
  };
  const [result] = await writeTransfers(db, prepare, {
    afterWrite: async (tx, [outcome], bookedAt) => {
      if (outcome?.kind === "refused") throw outcome.error;
      if (outcome?.kind !== "created") return;
      const expiresAt = input.timeoutSeconds === undefined ? null : new Date(bookedAt.getTime() + input.timeoutSeconds * 1000).toISOString();
      await tx.query(
        `insert into holds (id, marketplace_id, customer_id, asset_id, amount, escrow_account_id, open_transfer_id, status, expires_at, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, 'open', $8, $9)`,
        [id, input.marketplaceId, input.customerId, asset.id, input.amount.toString(), accounts.get(specKey(escrow)), outcome.transfer.id, expiresAt, bookedAt.toISOString()]);
    },
  });
  if (!result!.ok) throw result!.error;
  const rows = await db.query<{ id: string }>("select id from holds where open_transfer_id = $1", [result!.transfer.id]);
  return (await getHold(db, rows[0]!.id))!;
}

/**
 * Closes an open hold: whatever is left in escrow goes back to the customer. The hold is marked
 * closed first, so no new usage is planned against it; then the remainder is moved, re-read and
 * moved again if usage already in flight took some of it meanwhile (the escrow's no-overdraft limit
 * refuses the stale amount). Concurrent closes of one hold make the same ledger request (keyed by
 * the amount) and so move the remainder once. Closing a closed hold returns it as it is.
 */
export async function closeHold(db: Database, id: string, reason: "closed" | "expired" = "closed"): Promise<Hold> {
  const hold = await getHold(db, id);
  if (!hold) throw new LedgerError("invalid_request", `hold ${id} does not exist`);
  await db.query("update holds set status = $2, closed_at = $3 where id = $1 and status = 'open'", [id, reason, db.clock.now().toISOString()]);
  const customer = chart.customer(hold.assetId, hold.marketplaceId, hold.customerId, true);
  const customerAccount = (await ensureAccounts(db, [customer])).get(specKey(customer))!;
  for (let attempt = 0; attempt < 10; attempt++) {
    const escrow = (await getBalance(db, hold.escrowAccountId))!;
    const left = escrow.posted;
    if (left === 0n) break;
    // Keyed by the escrow's totals: concurrent closes that saw the same state move it once, and a
    // later sweep (after a refund into the escrow) is a new request.
    const [r] = await writeTransfers(db, [{
      // No reason in the request: a user's close and the expirer's that saw the same escrow make the
      // same request, and one replays the other (the reason is on the hold row).
      kind: "standard", idempotencyKey: `hold-close:${id}:${escrow.debitsPosted}:${escrow.creditsPosted}`, metadata: { hold: { id, close: true } },
      legs: [{ debitAccountId: hold.escrowAccountId, creditAccountId: customerAccount, amount: left }],
    }]);
    if (r!.ok) {
      // The first close transfer stays referenced; later sweeps (see reverseUsage) are in the ledger.
      await db.query("update holds set close_transfer_id = coalesce(close_transfer_id, $2) where id = $1", [id, r!.transfer.id]);
      continue; // re-read: zero unless more arrived, which cannot happen once closed
    }
    if (r!.error.code !== "exceeds_credits") throw r!.error;
  }
  return (await getHold(db, id))!;
}

/**
 * Closes the open holds whose time is up, and finishes closes that a crash interrupted (a hold
 * marked closed whose escrow still holds funds); returns how many holds it acted on.
 */
export async function expireUsageHolds(db: Database, limit = 100): Promise<number> {
  const due = await db.query<{ id: string; status: "open" | "closed" | "expired" }>(
    `select h.id, h.status from holds h
      where (h.status = 'open' and h.expires_at <= $2::timestamptz)
         or (h.status <> 'open' and exists (select 1 from account_balances b
                                             where b.account_id = h.escrow_account_id and b.credits_posted > b.debits_posted))
      limit $1`, [limit, db.clock.now().toISOString()]);
  for (const h of due) await closeHold(db, h.id, h.status === "open" ? "expired" : h.status);
  return due.length;
}
