import { and, asc, eq, gt, sql } from "drizzle-orm";
import type { Side } from "../../domain/accounts.js";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { accountBalances, accounts, assets, marketplaces } from "../schema/index.js";

/**
 * Marketplaces, operators, customers and invitations (src/services/marketplaces.ts), and the
 * customer's account facts that its credit limit is judged by (src/services/proposals/).
 */

export type PartyRow = { id: string; name: string; metadata: Record<string, unknown>; created_at: Date | string };

export type OperatorRow = PartyRow & { marketplace_ids: string[] | null };

export type InvitationRow = { marketplace_id: string; operator_id: string; invited_at: Date | string; accepted_at: Date | string | null };

export type CustomerRow = {
  marketplace_id: string;
  id: string;
  billing: "prepaid" | "postpaid";
  metadata: Record<string, unknown>;
  created_at: Date | string;
  retired_at: Date | string | null;
};

/** A customer with its postpaid credit limits (the overdraft limits of its accounts), by asset code. */
export type CustomerWithLimitsRow = CustomerRow & { limits: { asset: string; scale: number; credit_limit: string }[] | null };

// Marketplaces

/** Inserts a marketplace; undefined when the id is taken already. */
export async function insertMarketplace(db: Queryable, m: { id: string; name: string; metadata: Record<string, unknown> }): Promise<PartyRow | undefined> {
  const rows = await db.query<PartyRow>("insert into marketplaces (id, name, metadata) values ($1, $2, $3::text::jsonb) on conflict do nothing returning *", [
    m.id,
    m.name,
    JSON.stringify(m.metadata),
  ]);
  return rows[0];
}

export async function getMarketplaceRow(db: Queryable, id: string): Promise<PartyRow | undefined> {
  const rows = await db.query<PartyRow>("select * from marketplaces where id = $1", [id]);
  return rows[0];
}

/** Marketplaces in id order after `after`; with `id`, that one only. */
export async function listMarketplaceRows(db: Queryable, f: { id?: string; after?: string; limit: number }): Promise<PartyRow[]> {
  const m = marketplaces;
  return run(
    orm(db)
      .select({ id: m.id, name: m.name, metadata: sql<Record<string, unknown>>`${m.metadata}`, created_at: m.createdAt })
      .from(m)
      .where(and(f.id === undefined ? undefined : eq(m.id, f.id), f.after === undefined ? undefined : gt(m.id, f.after)))
      .orderBy(asc(m.id))
      .limit(f.limit),
  );
}

// Operators

/** Inserts an operator; false when the id is taken already (nothing is changed then). */
export async function insertOperator(db: Queryable, o: { id: string; name: string; metadata: Record<string, unknown> }): Promise<boolean> {
  const inserted = await db.query("insert into operators (id, name, metadata) values ($1, $2, $3::text::jsonb) on conflict do nothing returning id", [
    o.id,
    o.name,
    JSON.stringify(o.metadata),
  ]);
  return inserted.length > 0;
}

/** An operator's columns (table alias o) with the ids of the marketplaces it sells through, in id order. */
const OPERATOR_COLUMNS =
  "o.*, (select array_agg(r.marketplace_id order by r.marketplace_id) from marketplace_operators r where r.operator_id = o.id) as marketplace_ids";

/** The operator with the ids of the marketplaces it sells through, in id order. */
export async function getOperatorRow(db: Queryable, id: string): Promise<OperatorRow | undefined> {
  const rows = await db.query<OperatorRow>(`select ${OPERATOR_COLUMNS} from operators o where o.id = $1`, [id]);
  return rows[0];
}

/**
 * Operators in id order after `after`, each with the ids of the marketplaces it sells through; with
 * `id`, that one only; with `marketplaceId`, only the operators linked to that marketplace. Raw SQL
 * with the columns of getOperatorRow: in a one-table selection drizzle's builder writes a column
 * unqualified, which inside the correlated subquery would bind to the subquery's own table.
 */
export async function listOperatorRows(db: Queryable, f: { id?: string; marketplaceId?: string; after?: string; limit: number }): Promise<OperatorRow[]> {
  return db.query<OperatorRow>(
    `select ${OPERATOR_COLUMNS} from operators o
      where ($1::text is null or o.id = $1) and ($3::text is null or o.id > $3)
        and ($2::text is null or exists (select 1 from marketplace_operators l where l.marketplace_id = $2 and l.operator_id = o.id))
      order by o.id limit $4`,
    [f.id ?? null, f.marketplaceId ?? null, f.after ?? null, f.limit],
  );
}

export async function operatorExists(db: Queryable, id: string): Promise<boolean> {
  return (await db.query("select 1 from operators where id = $1", [id])).length > 0;
}

/** Lets a marketplace post an operator's usage; a link that exists already is left as it is. */
export async function linkOperatorToMarketplace(db: Queryable, marketplaceId: string, operatorId: string): Promise<void> {
  await db.query("insert into marketplace_operators (marketplace_id, operator_id) values ($1, $2) on conflict do nothing", [marketplaceId, operatorId]);
}

/** Links an operator just inserted to the marketplace that registered it (a link that exists already is an error). */
export async function linkNewOperatorToMarketplace(db: Queryable, marketplaceId: string, operatorId: string): Promise<void> {
  await db.query("insert into marketplace_operators (marketplace_id, operator_id) values ($1, $2)", [marketplaceId, operatorId]);
}

export async function isOperatorOfMarketplace(db: Queryable, marketplaceId: string, operatorId: string): Promise<boolean> {
  const linked = await db.query("select 1 from marketplace_operators where marketplace_id = $1 and operator_id = $2", [marketplaceId, operatorId]);
  return linked.length > 0;
}

/** The marketplaces an operator sells through, in id order. */
export async function marketplaceIdsOfOperator(db: Queryable, operatorId: string): Promise<string[]> {
  const markets = await db.query<{ marketplace_id: string }>(
    "select marketplace_id from marketplace_operators where operator_id = $1 order by marketplace_id",
    [operatorId],
  );
  return markets.map((m) => m.marketplace_id);
}

/** Sets (or replaces) an operator's own payout caps in an asset, naming the proposal that decided them. */
export async function upsertOperatorPayoutLimits(
  db: Queryable,
  l: { operatorId: string; assetId: string; maxPerPayout: string | null; maxPerDay: string | null; proposalId: string; updatedAt: Date },
): Promise<void> {
  await db.query(
    `insert into operator_payout_limits (operator_id, asset_id, max_per_payout, max_per_day, proposal_id, updated_at) values ($1, $2, $3, $4, $5, $6)
           on conflict (operator_id, asset_id) do update set max_per_payout = excluded.max_per_payout, max_per_day = excluded.max_per_day,
             proposal_id = excluded.proposal_id, updated_at = excluded.updated_at`,
    [l.operatorId, l.assetId, l.maxPerPayout, l.maxPerDay, l.proposalId, l.updatedAt.toISOString()],
  );
}

// Invitations

/** Records a marketplace's invitation of an operator; an invitation that exists already is left as it is. */
export async function insertInvitation(db: Queryable, i: { marketplaceId: string; operatorId: string; invitedBy: string; invitedAt: Date }): Promise<void> {
  await db.query(`insert into operator_invitations (marketplace_id, operator_id, invited_by, invited_at) values ($1, $2, $3, $4) on conflict do nothing`, [
    i.marketplaceId,
    i.operatorId,
    i.invitedBy,
    i.invitedAt.toISOString(),
  ]);
}

export async function getInvitationRow(db: Queryable, marketplaceId: string, operatorId: string): Promise<InvitationRow | undefined> {
  const [row] = await db.query<InvitationRow>("select * from operator_invitations where marketplace_id = $1 and operator_id = $2", [marketplaceId, operatorId]);
  return row;
}

/** The invitation, its row locked until the transaction ends. */
export async function lockInvitation(tx: Queryable, marketplaceId: string, operatorId: string): Promise<InvitationRow | undefined> {
  const [row] = await tx.query<InvitationRow>("select * from operator_invitations where marketplace_id = $1 and operator_id = $2 for update", [
    marketplaceId,
    operatorId,
  ]);
  return row;
}

/** An operator's invitations, oldest first. */
export async function listInvitationRows(db: Queryable, operatorId: string): Promise<InvitationRow[]> {
  return db.query<InvitationRow>("select * from operator_invitations where operator_id = $1 order by invited_at, marketplace_id", [operatorId]);
}

export async function markInvitationAccepted(db: Queryable, marketplaceId: string, operatorId: string, acceptedBy: string, acceptedAt: Date): Promise<void> {
  await db.query("update operator_invitations set accepted_by = $3, accepted_at = $4 where marketplace_id = $1 and operator_id = $2", [
    marketplaceId,
    operatorId,
    acceptedBy,
    acceptedAt.toISOString(),
  ]);
}

// Customers

/** Inserts a customer; undefined when the marketplace has a customer of that id already. */
export async function insertCustomer(
  db: Queryable,
  c: { marketplaceId: string; id: string; billing: "prepaid" | "postpaid"; metadata: Record<string, unknown> },
): Promise<CustomerRow | undefined> {
  const rows = await db.query<CustomerRow>(
    "insert into customers (marketplace_id, id, billing, metadata) values ($1, $2, $3, $4::text::jsonb) on conflict do nothing returning *",
    [c.marketplaceId, c.id, c.billing, JSON.stringify(c.metadata)],
  );
  return rows[0];
}

/** A customer's columns (table alias c) with its postpaid credit limits (the overdraft limits of its accounts), by asset code. */
const CUSTOMER_COLUMNS = `c.*, (select json_agg(json_build_object('asset', s.code, 'scale', s.scale, 'credit_limit', b.overdraft_limit::text) order by s.code)
                    from accounts a join account_balances b on b.account_id = a.id join assets s on s.id = a.asset_id
                   where a.marketplace_id = c.marketplace_id and a.ref = 'customer:' || c.id and a.opened_by_service
                     and a.code = 'customer_postpaid' and b.overdraft_limit > 0) as limits`;

export async function getCustomerRow(db: Queryable, marketplaceId: string, id: string): Promise<CustomerWithLimitsRow | undefined> {
  const rows = await db.query<CustomerWithLimitsRow>(`select ${CUSTOMER_COLUMNS} from customers c where c.marketplace_id = $1 and c.id = $2`, [
    marketplaceId,
    id,
  ]);
  return rows[0];
}

/**
 * Customers in (marketplace, id) order after `after`; with `marketplaceId`, that marketplace's only.
 * Raw SQL for the reason given at listOperatorRows (a correlated subquery).
 */
export async function listCustomerRows(
  db: Queryable,
  f: { marketplaceId?: string; after?: { marketplaceId: string; id: string }; limit: number },
): Promise<CustomerWithLimitsRow[]> {
  return db.query<CustomerWithLimitsRow>(
    `select ${CUSTOMER_COLUMNS} from customers c
      where ($1::text is null or c.marketplace_id = $1) and ($2::text is null or (c.marketplace_id, c.id) > ($2::text, $3::text))
      order by c.marketplace_id, c.id limit $4`,
    [f.marketplaceId ?? null, f.after?.marketplaceId ?? null, f.after?.id ?? null, f.limit],
  );
}

export type CustomerAccountRow = {
  account_id: string;
  asset: string;
  /** The asset's decimals, for display. */
  scale: number;
  normal_side: Side;
  debits_posted: string;
  credits_posted: string;
  debits_pending: string;
  credits_pending: string;
  overdraft_limit: string;
};

/** The customer's own accounts (its balance in each asset, opened by the service), by asset code, with their totals. */
export async function listCustomerAccountRows(db: Queryable, marketplaceId: string, customerId: string): Promise<CustomerAccountRow[]> {
  const a = accounts;
  const b = accountBalances;
  const amount = (column: typeof b.debitsPosted) => sql<string>`${column}::text`;
  return run(
    orm(db)
      .select({
        account_id: a.id,
        asset: assets.code,
        scale: assets.scale,
        normal_side: sql<Side>`${a.normalSide}`,
        debits_posted: amount(b.debitsPosted),
        credits_posted: amount(b.creditsPosted),
        debits_pending: amount(b.debitsPending),
        credits_pending: amount(b.creditsPending),
        overdraft_limit: amount(b.overdraftLimit),
      })
      .from(a)
      .innerJoin(b, eq(b.accountId, a.id))
      .innerJoin(assets, eq(assets.id, a.assetId))
      .where(and(eq(a.marketplaceId, marketplaceId), eq(a.ref, `customer:${customerId}`), eq(a.openedByService, true), eq(a.ownerType, "customer")))
      .orderBy(asc(assets.code)),
  );
}

/** The id and code of an asset named in a customer's credit limits, and when it was retired. */
export async function findAssetIdByCode(db: Queryable, code: string): Promise<{ id: string; code: string; retired_at: Date | string | null } | undefined> {
  const [a] = await db.query<{ id: string; code: string; retired_at: Date | string | null }>("select id, code, retired_at from assets where code = $1", [code]);
  return a;
}

/** The id of the customer's account the service opened under this ref, if it was opened. */
export async function findCustomerAccountId(db: Queryable, assetId: string, marketplaceId: string, ref: string): Promise<string | undefined> {
  const [row] = await db.query<{ id: string }>("select id from accounts where asset_id = $1 and marketplace_id = $2 and ref = $3 and opened_by_service", [
    assetId,
    marketplaceId,
    ref,
  ]);
  return row?.id;
}

/** What a customer's account owes (debits beyond credits, holds included) and its overdraft limit, with its balance row locked. */
export async function lockCustomerOwes(tx: Queryable, accountId: string): Promise<{ owes: bigint; limit: bigint }> {
  const [b] = await tx.query<{ owes: string; od: string }>(
    "select greatest(debits_posted + debits_pending - credits_posted, 0)::text as owes, overdraft_limit::text as od from account_balances where account_id = $1 for update",
    [accountId],
  );
  return { owes: BigInt(b!.owes), limit: BigInt(b!.od) };
}

/** Sets a postpaid customer's credit limit: its account's overdraft limit. */
export async function setCustomerCreditLimit(tx: Queryable, accountId: string, creditLimit: bigint): Promise<void> {
  await tx.query("update account_balances set overdraft_limit = $2 where account_id = $1", [accountId, creditLimit.toString()]);
}
