import { and, eq, isNull, sql } from "drizzle-orm";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { customers, marketplaces, operators } from "../schema/index.js";

/**
 * Changes of what describes a marketplace, an operator or a customer (their name and metadata, never
 * what money depends on), and a customer's retirement (src/services/update-*.ts, retire-customer.ts).
 */

/** A jsonb value from a JS object: sent as text and cast, so that no driver encodes the JSON twice. */
const jsonb = (value: Record<string, unknown>) => sql`${JSON.stringify(value)}::text::jsonb`;

export interface DescriptionChange {
  name?: string;
  metadata?: Record<string, unknown>;
}

const describing = (c: DescriptionChange) => ({
  ...(c.name === undefined ? {} : { name: c.name }),
  ...(c.metadata === undefined ? {} : { metadata: jsonb(c.metadata) }),
});

/** Renames a marketplace or replaces its metadata; false when there is no such marketplace. */
export async function updateMarketplaceRow(tx: Queryable, id: string, change: DescriptionChange): Promise<boolean> {
  const rows = await run(orm(tx).update(marketplaces).set(describing(change)).where(eq(marketplaces.id, id)).returning({ id: marketplaces.id }));
  return rows.length > 0;
}

/** Renames an operator or replaces its metadata; false when there is no such operator. */
export async function updateOperatorRow(tx: Queryable, id: string, change: DescriptionChange): Promise<boolean> {
  const rows = await run(orm(tx).update(operators).set(describing(change)).where(eq(operators.id, id)).returning({ id: operators.id }));
  return rows.length > 0;
}

/** Replaces a customer's metadata; false when the marketplace has no such customer. */
export async function updateCustomerMetadata(tx: Queryable, marketplaceId: string, id: string, metadata: Record<string, unknown>): Promise<boolean> {
  const rows = await run(
    orm(tx)
      .update(customers)
      .set({ metadata: jsonb(metadata) })
      .where(and(eq(customers.marketplaceId, marketplaceId), eq(customers.id, id)))
      .returning({ id: customers.id }),
  );
  return rows.length > 0;
}

/** Retires a customer at `at`; a customer retired already keeps its first retirement. */
export async function retireCustomerRow(tx: Queryable, marketplaceId: string, id: string, at: Date): Promise<void> {
  await run(
    orm(tx)
      .update(customers)
      .set({ retiredAt: at })
      .where(and(eq(customers.marketplaceId, marketplaceId), eq(customers.id, id), isNull(customers.retiredAt))),
  );
}
