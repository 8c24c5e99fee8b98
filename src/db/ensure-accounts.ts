import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import type { Queryable } from "./client.js";
import { pgArray } from "./sql-arrays.js";

/** An account of the chart of accounts, named by its ref (unique per asset and marketplace). */
export interface AccountSpec {
  assetId: string;
  marketplaceId: string | null;
  ref: string;
  code: string;
  ownerType: string;
  ownerId: string;
  normalSide: "debit" | "credit";
  debitsMustNotExceedCredits?: boolean;
}

export const specKey = (s: Pick<AccountSpec, "assetId" | "marketplaceId" | "ref">) => `${s.assetId}|${s.marketplaceId ?? ""}|${s.ref}`;

/**
 * Opens the accounts that do not exist yet (set-based: one insert, one select for any number) and
 * returns the id of each, by specKey. Accounts are created on first use, marked as opened by the
 * service; an account that exists is left as it is, whatever the spec says. An account with the
 * spec's ref that was opened through the API is never used in its place (account_exists).
 */
export async function ensureAccounts(db: Queryable, specs: AccountSpec[]): Promise<Map<string, string>> {
  // In key order, so that two batches opening the same new accounts wait on each other in the same
  // order instead of deadlocking.
  const unique = [...new Map(specs.map((s) => [specKey(s), s])).entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, s]) => s);
  const ids = new Map<string, string>();
  if (unique.length === 0) return ids;
  const cols = {
    ids: pgArray(unique.map(() => uuidv7())),
    assets: pgArray(unique.map((s) => s.assetId)),
    markets: pgArray(unique.map((s) => s.marketplaceId)),
    refs: pgArray(unique.map((s) => s.ref)),
  };
  await db.query(
    `with new as (
       select * from unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::boolean[])
         as n(id, asset_id, marketplace_id, ref, code, owner_type, owner_id, normal_side, dmnec)
     ), inserted as (
       insert into accounts (id, asset_id, marketplace_id, ref, code, owner_type, owner_id, normal_side, debits_must_not_exceed_credits, opened_by_service)
       select id, asset_id, marketplace_id, ref, code, owner_type, owner_id, normal_side, dmnec, true from new
       on conflict do nothing
       returning id
     )
     insert into account_balances (account_id) select id from inserted`,
    [
      cols.ids, cols.assets, cols.markets, cols.refs,
      pgArray(unique.map((s) => s.code)), pgArray(unique.map((s) => s.ownerType)), pgArray(unique.map((s) => s.ownerId)),
      pgArray(unique.map((s) => s.normalSide)), pgArray(unique.map((s) => s.debitsMustNotExceedCredits ?? false)),
    ],
  );
  const rows = await db.query<{ id: string; asset_id: string; marketplace_id: string | null; ref: string; opened_by_service: boolean }>(
    `select a.id, a.asset_id, a.marketplace_id, a.ref, a.opened_by_service
       from unnest($1::uuid[], $2::text[], $3::text[]) as w(asset_id, marketplace_id, ref)
       join accounts a on a.asset_id = w.asset_id and coalesce(a.marketplace_id, '') = coalesce(w.marketplace_id, '') and a.ref = w.ref`,
    [cols.assets, cols.markets, cols.refs],
  );
  for (const r of rows) {
    if (!r.opened_by_service) {
      throw new LedgerError("account_exists", `account ${r.ref}${r.marketplace_id ? ` of marketplace ${r.marketplace_id}` : ""} was opened through the API, not by the service; the service will not use it as its own`);
    }
    ids.set(specKey({ assetId: r.asset_id, marketplaceId: r.marketplace_id, ref: r.ref }), r.id);
  }
  return ids;
}

const RESERVED_PREFIXES = ["customer:", "operator:", "hold:", "deposits:", "payouts:", "treasury:", "expense:", "protocol:"];

/**
 * Refs of the chart below, which only the service opens: an account opened through the API may not
 * take one (a tenant's "protocol:fees" would otherwise look like the protocol's revenue, and a
 * "customer:c1" opened without its no-overdraft limit would be used as the customer's balance).
 */
export function isReservedRef(ref: string): boolean {
  return RESERVED_PREFIXES.some((p) => ref.startsWith(p)) || ref.endsWith(":fees");
}

/** The chart of accounts for usage (docs/usage.md) and payouts (docs/payouts.md). */
export const chart = {
  customer: (assetId: string, marketplaceId: string, customerId: string, prepaid: boolean): AccountSpec => ({
    assetId, marketplaceId, ref: `customer:${customerId}`, code: prepaid ? "customer_prepaid" : "customer_postpaid",
    ownerType: "customer", ownerId: customerId, normalSide: "credit", debitsMustNotExceedCredits: prepaid,
  }),
  operatorPayable: (assetId: string, operatorId: string): AccountSpec => ({
    assetId, marketplaceId: null, ref: `operator:${operatorId}:payable`, code: "operator_payable",
    ownerType: "operator", ownerId: operatorId, normalSide: "credit", debitsMustNotExceedCredits: true,
  }),
  fees: (assetId: string, marketplaceId: string, party: string): AccountSpec =>
    party === "protocol"
      ? { assetId, marketplaceId: null, ref: "protocol:fees", code: "protocol_fees", ownerType: "platform", ownerId: "protocol", normalSide: "credit" }
      : { assetId, marketplaceId, ref: `${party}:fees`, code: `${party}_fees`, ownerType: party === "marketplace" ? "marketplace" : "fee_party", ownerId: party === "marketplace" ? marketplaceId : party, normalSide: "credit" },
  holdEscrow: (assetId: string, marketplaceId: string, holdId: string, customerId: string): AccountSpec => ({
    assetId, marketplaceId, ref: `hold:${holdId}`, code: "customer_hold",
    ownerType: "customer", ownerId: customerId, normalSide: "credit", debitsMustNotExceedCredits: true,
  }),
  depositClearing: (assetId: string, marketplaceId: string): AccountSpec => ({
    assetId, marketplaceId, ref: "deposits:clearing", code: "deposit_clearing",
    ownerType: "marketplace", ownerId: marketplaceId, normalSide: "debit",
  }),
  /** Funds held for payouts on their way out, per settlement route ("{chainId}" or "offchain"). */
  payoutsInTransit: (assetId: string, route: string): AccountSpec => ({
    assetId, marketplaceId: null, ref: `payouts:in_transit:${route}`, code: "payouts_in_transit", ownerType: "platform", ownerId: "treasury", normalSide: "credit",
  }),
  /** The treasury that pays out (an asset of the platform): credited as payouts leave it. */
  treasury: (assetId: string, route: string): AccountSpec => ({
    assetId, marketplaceId: null, ref: `treasury:${route}`, code: "treasury", ownerType: "platform", ownerId: "treasury", normalSide: "debit",
  }),
  /** Gas spent by the treasury's transactions, in the chain's native asset. */
  gasExpense: (nativeAssetId: string, chainId: string): AccountSpec => ({
    assetId: nativeAssetId, marketplaceId: null, ref: `expense:gas:${chainId}`, code: "gas_expense", ownerType: "platform", ownerId: "treasury", normalSide: "debit",
  }),
};
