import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";

/**
 * What is withheld from an operator's payable (src/services/funding.ts, "withheldEarnings"): the
 * earnings its open disputes hold, and its receivable (what it owes the platform after a clawback,
 * docs/ledger.md "Clawbacks").
 */

/** The net of the operator's usage records in open disputes, in an asset (records reversed since are left out). */
export async function disputedNet(db: Queryable, operatorId: string, assetId: string): Promise<bigint> {
  const [row] = await db.query<{ net: string }>(
    `select coalesce(sum(i.net), 0)::text as net
       from dispute_items i join usage_records u on u.id = i.usage_id
      where i.open and i.operator_id = $1 and i.asset_id = $2
        and not exists (select 1 from transfers t where t.reverses_id = u.transfer_id)`,
    [operatorId, assetId],
  );
  return BigInt(row!.net);
}

export interface ReceivableRow {
  account_id: string;
  /** Debits less credits posted: what the operator owes. */
  owed: string;
  credits_posted: string;
}

/** What the operator owes the platform in each asset it owes something in, by asset code. */
export async function owedByOperator(db: Queryable, operatorId: string): Promise<Array<{ asset_id: string; code: string; scale: number; owed: string }>> {
  return db.query(
    `select a.asset_id, s.code, s.scale, (b.debits_posted - b.credits_posted)::text as owed
       from accounts a join account_balances b on b.account_id = a.id join assets s on s.id = a.asset_id
      where a.owner_type = 'operator' and a.owner_id = $1 and a.code = 'operator_receivable' and a.marketplace_id is null
        and a.opened_by_service and b.debits_posted > b.credits_posted
      order by s.code`,
    [operatorId],
  );
}

/** Of these operators, what each owes the platform (owedByOperator for many at once): one row per operator and asset owed. */
export async function owedByOperators(
  db: Queryable,
  operatorIds: string[],
): Promise<Array<{ operator_id: string; code: string; scale: number; owed: string }>> {
  if (operatorIds.length === 0) return [];
  return db.query(
    `select a.owner_id as operator_id, s.code, s.scale, (b.debits_posted - b.credits_posted)::text as owed
       from accounts a join account_balances b on b.account_id = a.id join assets s on s.id = a.asset_id
      where a.owner_type = 'operator' and a.owner_id = any($1::text[]) and a.code = 'operator_receivable' and a.marketplace_id is null
        and a.opened_by_service and b.debits_posted > b.credits_posted
      order by a.owner_id, s.code`,
    [pgArray(operatorIds)],
  );
}

/** The operator's receivable account in an asset (the service's own), if it was ever opened. */
export async function receivableOf(db: Queryable, operatorId: string, assetId: string): Promise<ReceivableRow | undefined> {
  const [row] = await db.query<ReceivableRow>(
    `select a.id as account_id, (b.debits_posted - b.credits_posted)::text as owed, b.credits_posted::text as credits_posted
       from accounts a join account_balances b on b.account_id = a.id
      where a.asset_id = $1 and a.marketplace_id is null and a.ref = $2 and a.opened_by_service and a.code = 'operator_receivable'`,
    [assetId, `operator:${operatorId}:receivable`],
  );
  return row;
}

/**
 * The (operator, asset) pairs with something owed, of the operators in the text array parameter
 * `$n` (all when it is null): a statement of its own (operatorsOwing), and a part of a usage
 * batch's facts (src/db/queries/usage.ts).
 */
export const operatorsOwingSql = (n: number) => `select a.owner_id as operator_id, a.asset_id
       from accounts a join account_balances b on b.account_id = a.id
      where a.owner_type = 'operator' and ($${n}::text[] is null or a.owner_id = any($${n}::text[]))
        and a.code = 'operator_receivable' and a.marketplace_id is null and a.opened_by_service
        and b.debits_posted > b.credits_posted
      order by a.owner_id, a.asset_id`;

/** The (operator, asset) pairs with something owed: of these operators, or of all (null). */
export async function operatorsOwing(db: Queryable, operatorIds: string[] | null): Promise<Array<{ operator_id: string; asset_id: string }>> {
  return db.query<{ operator_id: string; asset_id: string }>(operatorsOwingSql(1), [operatorIds === null ? null : pgArray(operatorIds)]);
}

export interface ReceivableReportRow {
  operator_id: string;
  account_id: string;
  asset: string;
  scale: number;
  owed: string;
  /** Booked time of the first debit since the receivable was last fully recovered (or opened). */
  since: Date;
  /** Clawed back and recovered over the account's life. */
  clawed_back: string;
  recovered: string;
}

/**
 * Every operator receivable with something owed, per asset (or one asset), by operator. `since` is
 * when the amount owed now began to be owed: the first entry after the last one that left the
 * account at zero.
 */
export async function receivablesOwed(db: Queryable, assetId: string | undefined): Promise<ReceivableReportRow[]> {
  return db.query<ReceivableReportRow>(
    `select a.owner_id as operator_id, a.id as account_id, s.code as asset, s.scale,
            (b.debits_posted - b.credits_posted)::text as owed, b.debits_posted::text as clawed_back, b.credits_posted::text as recovered,
            (select min(e.created_at) from entries e
              where e.account_id = a.id
                and e.id > coalesce((select max(z.id) from entries z where z.account_id = a.id and z.balance_after = 0), 0)) as since
       from accounts a join account_balances b on b.account_id = a.id join assets s on s.id = a.asset_id
      where a.code = 'operator_receivable' and a.marketplace_id is null and a.opened_by_service and a.owner_type = 'operator'
        and b.debits_posted > b.credits_posted and ($1::uuid is null or a.asset_id = $1)
      order by a.owner_id, s.code`,
    [assetId ?? null],
  );
}
