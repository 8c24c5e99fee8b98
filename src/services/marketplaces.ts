import { z } from "zod";
import { LedgerError } from "../domain/errors.js";
import type { Database, Queryable } from "../db/client.js";
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

export async function getOperator(db: Queryable, id: string): Promise<Operator | undefined> {
  const rows = await db.query<Parameters<typeof toParty>[0] & { marketplace_ids: string[] | null }>(
    `select o.*, (select array_agg(r.marketplace_id order by r.marketplace_id) from marketplace_operators r where r.operator_id = o.id) as marketplace_ids
       from operators o where o.id = $1`, [id]);
  const r = rows[0];
  return r && { ...toParty(r), marketplaceIds: r.marketplace_ids ?? [] };
}

export const CustomerInput = z.strictObject({ marketplaceId: PartyId, id: PartyId, billing: z.enum(["prepaid", "postpaid"]), metadata: Meta });

export interface Customer {
  marketplaceId: string;
  id: string;
  billing: "prepaid" | "postpaid";
  metadata: Record<string, unknown>;
  createdAt: Date;
}

type CustomerRow = { marketplace_id: string; id: string; billing: "prepaid" | "postpaid"; metadata: Record<string, unknown>; created_at: Date | string };
const toCustomer = (r: CustomerRow): Customer =>
  ({ marketplaceId: r.marketplace_id, id: r.id, billing: r.billing, metadata: r.metadata, createdAt: new Date(r.created_at) });

/** Creates a customer of a marketplace. Its billing (prepaid or postpaid) is fixed: it decides its accounts' limits. */
export async function createCustomer(db: Queryable, raw: z.input<typeof CustomerInput>): Promise<Customer> {
  const input = parseInput(CustomerInput, raw);
  if (!(await getMarketplace(db, input.marketplaceId))) throw new LedgerError("marketplace_not_found", `marketplace ${input.marketplaceId} does not exist`);
  const rows = await db.query<CustomerRow>(
    "insert into customers (marketplace_id, id, billing, metadata) values ($1, $2, $3, $4::text::jsonb) on conflict do nothing returning *",
    [input.marketplaceId, input.id, input.billing, JSON.stringify(input.metadata)]);
  if (rows[0]) return toCustomer(rows[0]);
  const existing = await getCustomer(db, input.marketplaceId, input.id);
  if (existing?.billing === input.billing && JSON.stringify(existing.metadata) === JSON.stringify(input.metadata)) return existing;
  throw new LedgerError("customer_exists", `customer ${input.id} already exists with other attributes (billing ${existing?.billing})`);
}

export async function getCustomer(db: Queryable, marketplaceId: string, id: string): Promise<Customer | undefined> {
  const rows = await db.query<CustomerRow>("select * from customers where marketplace_id = $1 and id = $2", [marketplaceId, id]);
  return rows[0] && toCustomer(rows[0]);
}
