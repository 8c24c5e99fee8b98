import { z } from "zod";
import { LedgerError } from "../domain/errors.js";
import type { Database, Queryable } from "../db/client.js";
import { isTransferAmount } from "../domain/money.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import {
  findAssetIdByCode,
  getCustomerRow,
  getInvitationRow,
  getMarketplaceRow,
  getOperatorRow,
  insertCustomer,
  insertInvitation,
  insertMarketplace,
  insertOperator,
  isOperatorOfMarketplace,
  linkNewOperatorToMarketplace,
  linkOperatorToMarketplace,
  listInvitationRows,
  lockInvitation,
  markInvitationAccepted,
  type CustomerWithLimitsRow,
  type InvitationRow,
  type OperatorRow,
  type PartyRow,
} from "../db/queries/parties.js";
import { assetRetired } from "../domain/assets.js";
import { chart } from "../domain/chart.js";
import { inTransaction } from "./transaction.js";
import { parseInput } from "./validation.js";

/** Ids of marketplaces, operators and customers: chosen by callers, stable, URL-safe. */
export const PartyId = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, "must be 1-64 characters of a-z, 0-9, '_', '.' or '-'");
export const PartyName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\u0000]*$/, "must not contain NUL characters");
const Meta = z.record(z.string(), z.unknown()).default({});
const Name = PartyName;

export interface Party {
  id: string;
  name: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

export const toParty = (r: PartyRow): Party => ({ id: r.id, name: r.name, metadata: r.metadata, createdAt: new Date(r.created_at) });

export const MarketplaceInput = z.strictObject({ id: PartyId, name: Name, metadata: Meta });

/** Creates a marketplace; the same id and name again returns it; the same id with another name is marketplace_exists. */
export async function createMarketplace(db: Queryable, raw: z.input<typeof MarketplaceInput>): Promise<Party> {
  const input = parseInput(MarketplaceInput, raw);
  const inserted = await insertMarketplace(db, { id: input.id, name: input.name, metadata: input.metadata });
  if (inserted) return toParty(inserted);
  const existing = await getMarketplace(db, input.id);
  if (existing?.name === input.name) return existing;
  throw new LedgerError("marketplace_exists", `marketplace ${input.id} already exists with another name`);
}

export async function getMarketplace(db: Queryable, id: string): Promise<Party | undefined> {
  const row = await getMarketplaceRow(db, id);
  return row && toParty(row);
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
    const inserted = await insertOperator(tx, { id: input.id, name: input.name, metadata: input.metadata });
    if (!inserted) {
      const existing = await getOperator(tx, input.id);
      // No details: the caller may be a marketplace that does not know this operator.
      if (existing?.name !== input.name) throw new LedgerError("operator_exists", `operator ${input.id} is registered under another name`);
    }
    if (input.marketplaceId !== undefined) {
      if (!(await getMarketplace(tx, input.marketplaceId))) {
        throw new LedgerError("marketplace_not_found", `marketplace ${input.marketplaceId} does not exist`);
      }
      await linkOperatorToMarketplace(tx, input.marketplaceId, input.id);
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

const toInvitation = (r: InvitationRow): Invitation => ({
  marketplaceId: r.marketplace_id,
  operatorId: r.operator_id,
  invitedAt: new Date(r.invited_at),
  acceptedAt: r.accepted_at === null ? null : new Date(r.accepted_at),
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
  db: Queryable,
  { now, by, ...raw }: { now: Date; by: string; id: string; name: string; metadata?: Record<string, unknown>; marketplaceId: string },
): Promise<MarketplaceRegistration> {
  const input = parseInput(OperatorInput, raw);
  const marketplaceId = input.marketplaceId!;
  return inTransaction(db, async (tx) => {
    if (await insertOperator(tx, { id: input.id, name: input.name, metadata: input.metadata })) {
      await linkNewOperatorToMarketplace(tx, marketplaceId, input.id);
      return { kind: "registered", operator: (await getOperator(tx, input.id))! };
    }
    if (await isOperatorOfMarketplace(tx, marketplaceId, input.id)) {
      const existing = (await getOperator(tx, input.id))!;
      if (existing.name !== input.name) throw new LedgerError("operator_exists", `operator ${input.id} is registered under another name`);
      return { kind: "registered", operator: existing };
    }
    await insertInvitation(tx, { marketplaceId, operatorId: input.id, invitedBy: by, invitedAt: now });
    const row = await getInvitationRow(tx, marketplaceId, input.id);
    return { kind: "invited", invitation: toInvitation(row!) };
  });
}

/** An operator's invitations from marketplaces (open and accepted). */
export async function listInvitations(db: Queryable, operatorId: string): Promise<Invitation[]> {
  const rows = await listInvitationRows(db, operatorId);
  return rows.map(toInvitation);
}

/** Accepts a marketplace's invitation: from now on the marketplace may post the operator's usage. */
export async function acceptInvitation(
  db: Queryable,
  { now, by, operatorId, marketplaceId }: { now: Date; by: string; operatorId: string; marketplaceId: string },
): Promise<Invitation> {
  return inTransaction(db, async (tx) => {
    const row = await lockInvitation(tx, marketplaceId, operatorId);
    if (!row) throw new LedgerError("invitation_not_found", `marketplace ${marketplaceId} has not invited operator ${operatorId}`);
    if (row.accepted_at === null) {
      await markInvitationAccepted(tx, marketplaceId, operatorId, by, now);
      await linkOperatorToMarketplace(tx, marketplaceId, operatorId);
    }
    const after = await getInvitationRow(tx, marketplaceId, operatorId);
    return toInvitation(after!);
  });
}

export const toOperator = (r: OperatorRow): Operator => ({ ...toParty(r), marketplaceIds: r.marketplace_ids ?? [] });

export async function getOperator(db: Queryable, id: string): Promise<Operator | undefined> {
  const r = await getOperatorRow(db, id);
  return r && toOperator(r);
}

export const CustomerInput = z.strictObject({
  marketplaceId: PartyId,
  id: PartyId,
  billing: z.enum(["prepaid", "postpaid"]),
  metadata: Meta,
  /** Postpaid only, and required: how much the customer may owe in each asset. */
  creditLimits: z.array(z.strictObject({ asset: z.string(), creditLimit: z.bigint() })).optional(),
});

export interface Customer {
  marketplaceId: string;
  id: string;
  billing: "prepaid" | "postpaid";
  metadata: Record<string, unknown>;
  /** A postpaid customer's credit limit in each asset it has one in (its account's overdraft limit), with the asset's scale. */
  creditLimits: { asset: string; scale: number; creditLimit: bigint }[];
  createdAt: Date;
  /** When it was retired: no new usage, holds or deposits for it. */
  retiredAt: Date | null;
}

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
    throw new LedgerError("invalid_request", "credit_limits are for postpaid customers; a prepaid customer spends what it deposited", [
      { path: "credit_limits", message: "only for billing postpaid" },
    ]);
  }
  if (input.billing === "postpaid" && limits.length === 0) {
    throw new LedgerError(
      "invalid_request",
      'a postpaid customer needs a credit limit in at least one asset: credit_limits [{"asset": "TUSD", "credit_limit": "…"}] (smallest units)',
      [{ path: "credit_limits", message: "is required for billing postpaid" }],
    );
  }
  const assets = new Map<string, { id: string; code: string }>();
  for (const [i, l] of limits.entries()) {
    const a = await findAssetIdByCode(db, l.asset);
    if (!a) throw new LedgerError("asset_not_found", `asset ${l.asset} does not exist`, [{ path: `credit_limits.${i}.asset`, message: "does not exist" }]);
    if (a.retired_at !== null) throw assetRetired(a.code, new Date(a.retired_at));
    if (assets.has(a.code))
      throw new LedgerError("invalid_request", `credit_limits names ${a.code} twice`, [{ path: `credit_limits.${i}.asset`, message: "named twice" }]);
    if (!isTransferAmount(l.creditLimit))
      throw new LedgerError("invalid_request", "a credit limit is a positive integer of at most 2^256 - 1 smallest units", [
        { path: `credit_limits.${i}.credit_limit`, message: "out of range" },
      ]);
    assets.set(a.code, a);
  }
  return inTransaction(db, async (tx) => {
    const inserted = await insertCustomer(tx, { marketplaceId: input.marketplaceId, id: input.id, billing: input.billing, metadata: input.metadata });
    if (inserted) {
      await ensureAccounts(
        tx,
        limits.map((l) => ({ ...chart.customer(assets.get(l.asset)!.id, input.marketplaceId, input.id, false), overdraftLimit: l.creditLimit })),
      );
      return (await getCustomer(tx, input.marketplaceId, input.id))!;
    }
    const existing = (await getCustomer(tx, input.marketplaceId, input.id))!;
    const sameLimits = limits.every((l) => existing.creditLimits.some((e) => e.asset === l.asset && e.creditLimit === l.creditLimit));
    if (existing.billing === input.billing && JSON.stringify(existing.metadata) === JSON.stringify(input.metadata) && sameLimits) return existing;
    throw new LedgerError(
      "customer_exists",
      `customer ${input.id} already exists with other attributes (billing ${existing.billing}${sameLimits ? "" : "; its credit limits change by proposal: PUT /v1/customers/{id}/credit-limits/{asset}"})`,
    );
  });
}

export const toCustomer = (r: CustomerWithLimitsRow): Customer => ({
  marketplaceId: r.marketplace_id,
  id: r.id,
  billing: r.billing,
  metadata: r.metadata,
  createdAt: new Date(r.created_at),
  retiredAt: r.retired_at === null ? null : new Date(r.retired_at),
  creditLimits: (r.limits ?? []).map((l) => ({ asset: l.asset, scale: l.scale, creditLimit: BigInt(l.credit_limit) })),
});

export async function getCustomer(db: Queryable, marketplaceId: string, id: string): Promise<Customer | undefined> {
  const r = await getCustomerRow(db, marketplaceId, id);
  return r && toCustomer(r);
}
