import type { Database, Queryable } from "../db/client.js";
import { bigintDigits } from "../domain/ids.js";
import {
  customerBalances as customerBalanceRows,
  customerStatementLines as customerStatementRows,
  customerStatementTotals as customerStatementTotalRows,
  inOneSnapshot,
  isCustomerStatementLine,
  type CustomerStatementRow,
} from "../db/queries/customer-statements.js";
import { effectiveRateUnits } from "../domain/earnings.js";
import { getCustomer, getMarketplace, type Customer, type Party } from "./marketplaces.js";

/**
 * A customer's statement and balances (docs/reconciliation.md, "Customer statements"): per asset,
 * the opening balance, the period's lines (deposits, usage, refunds, other movements) and the
 * closing balance, by effective time. Who may read which customer is the routes' to decide
 * (src/http/routes/party-access.ts); these read what they are asked for.
 */

/** Whose statement: the customer and its marketplace. */
export interface StatementParty {
  customer: Customer;
  marketplace: Party;
}

/** The customer of this marketplace and the marketplace, or undefined when the marketplace has no such customer. */
export async function statementParty(db: Queryable, marketplaceId: string, customerId: string): Promise<StatementParty | undefined> {
  const [customer, marketplace] = await Promise.all([getCustomer(db, marketplaceId, customerId), getMarketplace(db, marketplaceId)]);
  return customer && marketplace ? { customer, marketplace } : undefined;
}

export type StatementLineType = CustomerStatementRow["type"];

/** What a usage line charged (or a refund line gave back): the record, its quantity and price. */
export interface StatementUsage {
  id: string;
  externalId: string;
  resource: string;
  unit: string;
  quantity: string;
  /** Price per unit in the asset's display units, as the marketplace gave it; null when it gave the amount. */
  unitPrice: string | null;
  /** Gross per unit in the asset's smallest units, rounded down (null for a quantity of 0). */
  rateUnits: bigint | null;
  /** What the record charged the customer (before fees, which the operator and fee parties share). */
  gross: bigint;
}

export interface CustomerStatementLine {
  type: StatementLineType;
  transferId: string;
  seq: string;
  assetId: string;
  asset: string;
  scale: number;
  /** Signed: + to the customer (deposits, refunds), − from it (usage). */
  amount: bigint;
  effectiveAt: Date;
  bookedAt: Date;
  description: string;
  depositSource: "chain" | "receipt" | "marketplace" | null;
  /** A chain deposit's transaction hash, or a receipt's reference. */
  reference: string | null;
  usage: StatementUsage | null;
}

function describe(r: CustomerStatementRow): string {
  if (r.type === "usage") return r.resource!;
  if (r.type === "refund") return r.reason ? `refund: ${r.reason}` : "refund";
  if (r.deposit_source === "chain") return "deposit on chain";
  if (r.deposit_source === "receipt") return "payment received";
  if (r.deposit_source === "marketplace") return "deposit recorded by the marketplace";
  if (r.conversion_from !== null) return `conversion ${r.conversion_from} to ${r.conversion_to}`;
  if (r.transfer_kind === "reversal") return `reversal of transfer ${r.reverses_id}`;
  return `${r.transfer_kind} transfer`;
}

function usageOf(r: CustomerStatementRow): StatementUsage | null {
  if (r.usage_id === null) return null;
  const gross = BigInt(r.gross!);
  return {
    id: r.usage_id,
    externalId: r.external_id!,
    resource: r.resource!,
    unit: r.unit!,
    quantity: r.quantity!,
    unitPrice: r.unit_price,
    rateUnits: effectiveRateUnits(gross, r.quantity!, r.unit!, "unit"),
    gross,
  };
}

const toLine = (r: CustomerStatementRow): CustomerStatementLine => ({
  type: r.type,
  transferId: r.transfer_id,
  seq: r.seq,
  assetId: r.asset_id,
  asset: r.asset_code,
  scale: r.scale,
  amount: BigInt(r.amount),
  effectiveAt: new Date(r.effective_at),
  bookedAt: new Date(r.created_at),
  description: describe(r),
  depositSource: r.deposit_source,
  reference: r.reference,
  usage: usageOf(r),
});

/** A statement's cursor: the last line of the page before (its transfer's position and its asset). */
export const encodeCustomerStatementCursor = (line: Pick<CustomerStatementLine, "seq" | "assetId">) =>
  Buffer.from(`c:${line.seq}:${line.assetId}`).toString("base64url");

export function decodeCustomerStatementCursor(cursor: string): { seq: string; assetId: string } | undefined {
  const m = /^c:([0-9]{1,19}):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(Buffer.from(cursor, "base64url").toString());
  return m && bigintDigits(m[1]!) !== undefined ? { seq: m[1]!, assetId: m[2]! } : undefined;
}

/** Whether the cursor names a line of this customer's statement (a transfer that moved its money in that asset). */
export const isStatementCursorOf = (db: Queryable, p: StatementParty, after: { seq: string; assetId: string }) =>
  isCustomerStatementLine(db, p.customer, after.seq, after.assetId);

/** Per asset: opening, the lines' sums by type, closing (and the part of it in holds), the number of lines. */
export interface CustomerStatementTotals {
  assetId: string;
  asset: string;
  scale: number;
  opening: bigint;
  deposits: bigint;
  usage: bigint;
  refunds: bigint;
  other: bigint;
  closing: bigint;
  closingHeld: bigint;
  lines: number;
}

const toTotals = (r: Awaited<ReturnType<typeof customerStatementTotalRows>>[number]): CustomerStatementTotals => ({
  assetId: r.asset_id,
  asset: r.asset_code,
  scale: r.scale,
  opening: BigInt(r.opening),
  deposits: BigInt(r.deposits),
  usage: BigInt(r.usage),
  refunds: BigInt(r.refunds),
  other: BigInt(r.other),
  closing: BigInt(r.closing),
  closingHeld: BigInt(r.closing_held),
  lines: Number(r.lines),
});

/**
 * The statement over [from, to) of effective time, read in one snapshot: its lines by asset code,
 * then effective time, then recording order, after the cursor's line and at most `limit`; and with
 * `totals`, per asset the opening balance, the sums of all the period's lines by type and the
 * closing balance.
 */
export async function customerStatement(
  db: Database,
  p: StatementParty,
  period: { from: Date; to: Date },
  options: { after?: { seq: string; assetId: string }; limit: number; totals: boolean },
): Promise<{ lines: CustomerStatementLine[]; totals: CustomerStatementTotals[] }> {
  return inOneSnapshot(db, async (tx) => {
    const lines = (await customerStatementRows(tx, p.customer, period, options)).map(toLine);
    const totals = options.totals ? (await customerStatementTotalRows(tx, p.customer, period)).map(toTotals) : [];
    return { lines, totals };
  });
}

/** A customer's balance now in one asset. */
export interface CustomerBalance {
  assetId: string;
  asset: string;
  scale: number;
  accountId: string | null;
  /** Its balance account's posted balance (negative: what a postpaid customer owes). */
  posted: bigint;
  /** Posted less pending debits (a postpaid customer may spend down to −creditLimit). */
  available: bigint;
  /** In its holds' escrow accounts: reserved for running jobs, returned when a hold closes. */
  held: bigint;
  /** Posted plus held: all its money with the service (the statement's closing balance for a period ending now). */
  total: bigint;
  /** Postpaid: how much it may owe in the asset; prepaid: null. */
  creditLimit: bigint | null;
}

export async function customerBalances(db: Queryable, p: StatementParty): Promise<CustomerBalance[]> {
  return (await customerBalanceRows(db, p.customer)).map((r) => ({
    assetId: r.asset_id,
    asset: r.asset_code,
    scale: r.scale,
    accountId: r.account_id,
    posted: BigInt(r.posted),
    available: BigInt(r.available),
    held: BigInt(r.held),
    total: BigInt(r.posted) + BigInt(r.held),
    creditLimit: p.customer.billing === "postpaid" ? BigInt(r.overdraft_limit) : null,
  }));
}
