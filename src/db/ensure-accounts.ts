import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import type { Queryable } from "./client.js";
import { inOrder } from "./in-order.js";
import { pgColumns } from "./sql-arrays.js";
import { specKey, type AccountSpec } from "../domain/chart.js";

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
  const columns = await pgColumns(unique, [
    () => uuidv7(),
    (s) => s.assetId,
    (s) => s.marketplaceId,
    (s) => s.ref,
    (s) => s.code,
    (s) => s.ownerType,
    (s) => s.ownerId,
    (s) => s.normalSide,
    (s) => s.debitsMustNotExceedCredits ?? false,
    (s) => s.creditsMustNotExceedDebits ?? false,
    (s) => (s.overdraftLimit ?? 0n).toString(),
  ]);
  const [, assets, markets, refs] = columns;
  // The insert and the select are sent together (the select runs after the insert and sees its rows).
  const [, rows] = await inOrder(db, [
    () =>
      db.query(
        `with new as (
       select * from unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::boolean[], $10::boolean[], $11::numeric[])
         as n(id, asset_id, marketplace_id, ref, code, owner_type, owner_id, normal_side, dmnec, cmned, overdraft)
     ), inserted as (
       insert into accounts (id, asset_id, marketplace_id, ref, code, owner_type, owner_id, normal_side, debits_must_not_exceed_credits, credits_must_not_exceed_debits, opened_by_service)
       select id, asset_id, marketplace_id, ref, code, owner_type, owner_id, normal_side, dmnec, cmned, true from new
       on conflict do nothing
       returning id
     )
     insert into account_balances (account_id, overdraft_limit) select i.id, n.overdraft from inserted i join new n on n.id = i.id`,
        columns,
      ),
    () =>
      db.query<{ id: string; asset_id: string; marketplace_id: string | null; ref: string; opened_by_service: boolean }>(
        `select a.id, a.asset_id, a.marketplace_id, a.ref, a.opened_by_service
       from unnest($1::uuid[], $2::text[], $3::text[]) as w(asset_id, marketplace_id, ref)
       join accounts a on a.asset_id = w.asset_id and coalesce(a.marketplace_id, '') = coalesce(w.marketplace_id, '') and a.ref = w.ref`,
        [assets, markets, refs],
      ),
  ]);
  for (const r of rows) {
    if (!r.opened_by_service) {
      throw new LedgerError(
        "account_exists",
        `account ${r.ref}${r.marketplace_id ? ` of marketplace ${r.marketplace_id}` : ""} was opened through the API, not by the service; the service will not use it as its own`,
      );
    }
    ids.set(specKey({ assetId: r.asset_id, marketplaceId: r.marketplace_id, ref: r.ref }), r.id);
  }
  return ids;
}
