import { z } from "zod";
import { LedgerError } from "../domain/errors.js";
import type { Database, Queryable } from "../db/client.js";
import { isTransferAmount } from "../domain/money.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { chart } from "../domain/chart.js";
import { inTransaction } from "./transaction.js";
import { parseInput } from "./validation.js";

/** Ids of marketplaces, operators and customers: chosen by callers, stable, URL-safe. */
export const PartyId = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, "must be 1-64 characters of a-z, 0-9, '_', '.' or '-'");
const Name = z.string().min(1).max(200).regex(/^[^\u0000]*$/, "must not contain NUL characters");
const Meta = z.record(z.string(), z.unknown()).default({});

export interface Party {
  id: string;
  name: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

const toParty = (r: { id: string; name: string; metadata: Record<string, unknown>; created_at: Date | string }): Party =>
  ({ id: r.id, name: r.name, metadata: r.metadata, createdAt: new Date(r.created_at) });

export const MarketplaceInput = z.strictObject({ id: PartyId, name: Name, metadata: Meta });

/** Creates a marketplace; the same id and name again returns it; the same id with another name is marketplace_exists. */
export async function createMarketplace(db: Queryable, raw: z.input<typeof MarketplaceInput>): Promise<Party> {
  const input = parseInput(MarketplaceInput, raw);
  const rows = await db.query<Parameters<typeof toParty>[0]>(
    "insert into marketplaces (id, name, metadata) values ($1, $2, $3::text::jsonb) on conflict do nothing returning *",
    [input.id, input.name, JSON.stringify(input.metadata)]);
  if (rows[0]) return toParty(rows[0]);
  const existing = await getMarketplace(db, input.id);
  if (existing?.name === input.name) return existing;
  throw new LedgerError("marketplace_exists", `marketplace ${input.id} already exists with another name`);
}

export async function getMarketplace(db: Queryable, id: string): Promise<Party | undefined> {
  const rows = await db.query<Parameters<typeof toParty>[0]>("select * from marketplaces where id = $1", [id]);
  return rows[0] && toParty(rows[0]);
}

export const OperatorInput = z.strictObject({ id: PartyId, name: Name, metadata: Meta, marketplaceId: PartyId.optional() });

export interface Operator extends Party {
  marketplaceIds: string[];
}

/**
 * Registers an operator (global id) and, with `marketplaceId`, lets that marketplace post its usage.
 * Registering an operator that exists only adds the link: its name and metadata stay as first given.
 */
export async function registerOperator(db: Database | Queryable, raw: z.input<typeof OperatorInput>): Promise<Operator> {
  const input = parseInput(OperatorInput, raw);
  return inTransaction(db, async (tx) => {
    const inserted = await tx.query("insert into operators (id, name, metadata) values ($1, $2, $3::text::jsonb) on conflict do nothing returning id",
      [input.id, input.name, JSON.stringify(input.metadata)]);
    if (inserted.length === 0) {
      const existing = await getOperator(tx, input.id);
      // No details: the caller may be a marketplace that does not know this operator.
      if (existing?.name !== input.name) throw new LedgerError("operator_exists", `operator ${input.id} is registered under another name`);
    }
    if (input.marketplaceId !== undefined) {
      if (!(await getMarketplace(tx, input.marketplaceId))) {
        throw new LedgerError("marketplace_not_found", `marketplace ${input.marketplaceId} does not exist`);
      }
      await tx.query("insert into marketplace_operators (marketplace_id, operator_id) values ($1, $2) on conflict do nothing",
        [input.marketplaceId, input.id]);
    }
    return (await getOperator(tx, input.id))!;
  });
}

export interface Invitation {
  marketplaceId: string;
  operatorId: string;
  invitedAt: Date;
  acceptedAt: Date | null;
}

type InvitationRow = { marketplace_id: string; operator_id: string; invited_at: Date | string; accepted_at: Date | string | null };
const toInvitation = (r: InvitationRow): Invitation => ({
  marketplaceId: r.marketplace_id, operatorId: r.operator_id, invitedAt: new Date(r.invited_at), acceptedAt: r.accepted_at === null ? null : new Date(r.accepted_at),
});

/**
 * What a marketplace key's registration of an operator did. An operator the marketplace already
 * sells for, or a new one, is `registered`. An operator id that exists without a link to this
 * marketplace is only `invited`: the operator joins when its own key (or an admin) accepts, and
 * the answer says nothing about that operator (not its name, not its marketplaces), whatever name
 * was given.
 */
export type MarketplaceRegistration = { kind: "registered"; operator: Operator } | { kind: "invited"; invitation: Invitation };

export async function registerOperatorForMarketplace(
  db: Queryable, now: Date, by: string, raw: { id: string; name: string; metadata?: Record<string, unknown>; marketplaceId: string },
): Promise<MarketplaceRegistration> {
  const input = parseInput(OperatorInput, raw);
  const marketplaceId = input.marketplaceId!;
  return inTransaction(db, async (tx) => {
    const inserted = await tx.query("insert into operators (id, name, metadata) values ($1, $2, $3::text::jsonb) on conflict do nothing returning id",
      [input.id, input.name, JSON.stringify(input.metadata)]);
    if (inserted.length > 0) {
      await tx.query("insert into marketplace_operators (marketplace_id, operator_id) values ($1, $2)", [marketplaceId, input.id]);
      return { kind: "registered", operator: (await getOperator(tx, input.id))! };
    }
    const linked = await tx.query("select 1 from marketplace_operators where marketplace_id = $1 and operator_id = $2", [marketplaceId, input.id]);
    if (linked.length > 0) {
      const existing = (await getOperator(tx, input.id))!;
      if (existing.name !== input.name) throw new LedgerError("operator_exists", `operator ${input.id} is registered under another name`);
      return { kind: "registered", operator: existing };
    }
    await tx.query(
      `insert into operator_invitations (marketplace_id, operator_id, invited_by, invited_at) values ($1, $2, $3, $4) on conflict do nothing`,
      [marketplaceId, input.id, by, now.toISOString()]);
    const [row] = await tx.query<InvitationRow>("select * from operator_invitations where marketplace_id = $1 and operator_id = $2", [marketplaceId, input.id]);
    return { kind: "invited", invitation: toInvitation(row!) };
  });
}

/** An operator's invitations from marketplaces (open and accepted). */
export async function listInvitations(db: Queryable, operatorId: string): Promise<Invitation[]> {
  const rows = await db.query<InvitationRow>("select * from operator_invitations where operator_id = $1 order by invited_at, marketplace_id", [operatorId]);
  return rows.map(toInvitation);
}

/** Accepts a marketplace's invitation: from now on the marketplace may post the operator's usage. */
export async function acceptInvitation(db: Queryable, now: Date, by: string, operatorId: string, marketplaceId: string): Promise<Invitation> {
  return inTransaction(db, async (tx) => {
    const [row] = await tx.query<InvitationRow>(
      "select * from operator_invitations where marketplace_id = $1 and operator_id = $2 for update", [marketplaceId, operatorId]);
    if (!row) throw new LedgerError("invitation_not_found", `marketplace ${marketplaceId} has not invited operator ${operatorId}`);
    if (row.accepted_at === null) {
      await tx.query("update operator_invitations set accepted_by = $3, accepted_at = $4 where marketplace_id = $1 and operator_id = $2", [marketplaceId, operatorId, by, now.toISOString()]);
      await tx.query("insert into marketplace_operators (marketplace_id, operator_id) values ($1, $2) on conflict do nothing", [marketplaceId, operatorId]);
    }
    const [after] = await tx.query<InvitationRow>("select * from operator_invitations where marketplace_id = $1 and operator_id = $2", [marketplaceId, operatorId]);
    return toInvitation(after!);
  });
}

export async function getOperator(db: Queryable, id: string): Promise<Operator | undefined> {
  const rows = await db.query<Parameters<typeof toParty>[0] & { marketplace_ids: string[] | null }>(
    `select o.*, (select array_agg(r.marketplace_id order by r.marketplace_id) from marketplace_operators r where r.operator_id = o.id) as marketplace_ids
       from operators o where o.id = $1`, [id]);
  const r = rows[0];
  return r && { ...toParty(r), marketplaceIds: r.marketplace_ids ?? [] };
}

export const CustomerInput = z.strictObject({
  marketplaceId: PartyId, id: PartyId, billing: z.enum(["prepaid", "postpaid"]), metadata: Meta,
  /** Postpaid only, and required: how much the customer may owe in each asset. */
  creditLimits: z.array(z.strictObject({ asset: z.string(), creditLimit: z.bigint() })).optional(),
});

export interface Customer {
  marketplaceId: string;
  id: string;
  billing: "prepaid" | "postpaid";
  metadata: Record<string, unknown>;
  /** A postpaid customer's credit limit in each asset it has one in (its account's overdraft limit). */
  creditLimits: { asset: string; creditLimit: bigint }[];
  createdAt: Date;
}

type CustomerRow = { marketplace_id: string; id: string; billing: "prepaid" | "postpaid"; metadata: Record<string, unknown>; created_at: Date | string };

/**
 * Creates a customer of a marketplace. Its billing (prepaid or postpaid) is fixed: it decides its
 * accounts' limits. A postpaid customer is created with a credit limit in at least one asset: its
 * usage is refused beyond it (credit_limit_exceeded), and in an asset it has none in. The customer's
 * accounts in those assets are opened with it; later changes are proposals (proposeCustomerCreditLimit).
 */
export async function createCustomer(db: Queryable, raw: z.input<typeof CustomerInput>): Promise<Customer> {
  const input = parseInput(CustomerInput, raw);
  if (!(await getMarketplace(db, input.marketplaceId))) throw new LedgerError("marketplace_not_found", `marketplace ${input.marketplaceId} does not exist`);
  const limits = input.creditLimits ?? [];
  if (input.billing === "prepaid" && limits.length > 0) {
    throw new LedgerError("invalid_request", "credit_limits are for postpaid customers; a prepaid customer spends what it deposited", [{ path: "credit_limits", message: "only for billing postpaid" }]);
  }
  if (input.billing === "postpaid" && limits.length === 0) {
    throw new LedgerError("invalid_request", "a postpaid customer needs a credit limit in at least one asset: credit_limits [{\"asset\": \"TUSD\", \"credit_limit\": \"…\"}] (smallest units)",
      [{ path: "credit_limits", message: "is required for billing postpaid" }]);
  }
  const assets = new Map<string, { id: string; code: string }>();
  for (const [i, l] of limits.entries()) {
    const [a] = await db.query<{ id: string; code: string }>("select id, code from assets where code = $1", [l.asset]);
    if (!a) throw new LedgerError("asset_not_found", `asset ${l.asset} does not exist`, [{ path: `credit_limits.${i}.asset`, message: "does not exist" }]);
    if (assets.has(a.code)) throw new LedgerError("invalid_request", `credit_limits names ${a.code} twice`, [{ path: `credit_limits.${i}.asset`, message: "named twice" }]);
    if (!isTransferAmount(l.creditLimit)) throw new LedgerError("invalid_request", "a credit limit is a positive integer of at most 2^256 - 1 smallest units", [{ path: `credit_limits.${i}.credit_limit`, message: "out of range" }]);
    assets.set(a.code, a);
  }
  return inTransaction(db, async (tx) => {
    const rows = await tx.query<CustomerRow>(
      "insert into customers (marketplace_id, id, billing, metadata) values ($1, $2, $3, $4::text::jsonb) on conflict do nothing returning *",
      [input.marketplaceId, input.id, input.billing, JSON.stringify(input.metadata)]);
    if (rows[0]) {
      await ensureAccounts(tx, limits.map((l) => ({ ...chart.customer(assets.get(l.asset)!.id, input.marketplaceId, input.id, false), overdraftLimit: l.creditLimit })));
      return (await getCustomer(tx, input.marketplaceId, input.id))!;
    }
    const existing = (await getCustomer(tx, input.marketplaceId, input.id))!;
    const sameLimits = limits.every((l) => existing.creditLimits.some((e) => e.asset === l.asset && e.creditLimit === l.creditLimit));
    if (existing.billing === input.billing && JSON.stringify(existing.metadata) === JSON.stringify(input.metadata) && sameLimits) return existing;
    throw new LedgerError("customer_exists", `customer ${input.id} already exists with other attributes (billing ${existing.billing}${sameLimits ? "" : "; its credit limits change by proposal: PUT /v1/customers/{id}/credit-limits/{asset}"})`);
  });
}

export async function getCustomer(db: Queryable, marketplaceId: string, id: string): Promise<Customer | undefined> {
  const rows = await db.query<CustomerRow & { limits: { asset: string; credit_limit: string }[] | null }>(
    `select c.*, (select json_agg(json_build_object('asset', s.code, 'credit_limit', b.overdraft_limit::text) order by s.code)
                    from accounts a join account_balances b on b.account_id = a.id join assets s on s.id = a.asset_id
                   where a.marketplace_id = c.marketplace_id and a.ref = 'customer:' || c.id and a.opened_by_service
                     and a.code = 'customer_postpaid' and b.overdraft_limit > 0) as limits
       from customers c where c.marketplace_id = $1 and c.id = $2`, [marketplaceId, id]);
  const r = rows[0];
  return r && {
    marketplaceId: r.marketplace_id, id: r.id, billing: r.billing, metadata: r.metadata, createdAt: new Date(r.created_at),
    creditLimits: (r.limits ?? []).map((l) => ({ asset: l.asset, creditLimit: BigInt(l.credit_limit) })),
  };
}
