import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

/**
 * A rated usage record and the ledger transfer that posted it. Append-only. Unique per marketplace
 * and the marketplace's own external_id, which makes ingestion idempotent.
 */
export const usageRecords = pgTable(
  "usage_records",
  {
    id: uuid("id").primaryKey(),
    marketplaceId: text("marketplace_id").notNull(),
    externalId: text("external_id").notNull(),
    requestHash: text("request_hash").notNull(),
    operatorId: text("operator_id").notNull(),
    customerId: text("customer_id").notNull(),
    resource: text("resource").notNull(),
    unit: text("unit").notNull(),
    quantity: numeric("quantity").notNull(),
    /** Price per unit in the asset's display units, when the record was priced that way. */
    unitPrice: numeric("unit_price"),
    // No foreign keys (see entries): verify checks the references.
    assetId: uuid("asset_id").notNull(),
    gross: numeric("gross", { precision: 78, scale: 0 }).notNull(),
    net: numeric("net", { precision: 78, scale: 0 }).notNull(),
    /** [{ party, account_id, amount }] in rule order. */
    fees: jsonb("fees").notNull(),
    feeScheduleVersion: integer("fee_schedule_version"),
    periodStart: timestamp("period_start", { withTimezone: true }).notNull(),
    periodEnd: timestamp("period_end", { withTimezone: true }).notNull(),
    effectiveAt: timestamp("effective_at", { withTimezone: true }).notNull(),
    holdId: uuid("hold_id"),
    transferId: uuid("transfer_id").notNull(),
    metadata: jsonb("metadata").notNull().default({}),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /**
     * The order in which usage is funded (src/services/funding.ts): drawn when the record is
     * inserted, while its transaction holds its marketplace's funding lock in shared mode, so that
     * a record committed after a payout was judged always comes after every record that payout saw.
     */
    fundingSeq: bigserial("funding_seq", { mode: "bigint" }).notNull(),
    /** Id of the database transaction that wrote the row, for the event relay; BRIN: nearly free to maintain on the ingest path (src/db/event-relay.ts). */
    txid: bigint("txid", { mode: "bigint" }).default(sql`(pg_current_xact_id()::text)::bigint`),
  },
  (t) => [
    uniqueIndex("usage_records_external_uq").on(t.marketplaceId, t.externalId),
    index("usage_records_operator_idx").on(t.operatorId, t.effectiveAt),
    index("usage_records_marketplace_idx").on(t.marketplaceId, t.effectiveAt),
    index("usage_records_txid_idx").using("brin", t.txid),
    // The records after a funding mark (src/services/funding-marks.ts): funding_seq grows with the table, so BRIN ranges are tight and nearly free to keep.
    index("usage_records_funding_seq_idx").using("brin", t.fundingSeq),
    // Capacity checks (docs/usage.md, "Capacity"): an operator's usage of a resource overlapping a period.
    index("usage_records_capacity_idx").on(t.operatorId, t.resource, t.periodEnd),
    // A reversal's record, found by its transfer (the trigger that keeps operator_earned).
    index("usage_records_transfer_idx").on(t.transferId),
    check("usage_records_split", sql`${t.gross} > 0 and ${t.net} >= 0 and ${t.net} <= ${t.gross}`),
    check("usage_records_period", sql`${t.periodStart} <= ${t.periodEnd}`),
  ],
);

/**
 * What each operator's usage earned, per marketplace and asset: the net of its usage records less
 * the net of those reversed, as parts to be summed. A part is added by a trigger in the statement
 * that inserts usage records (one per marketplace, operator and asset of the statement) or a
 * reversal of a usage record's transfer, whoever writes, and never locks a row: concurrent batches
 * of the same operator do not wait for each other here. The workers fold an operator's parts into
 * one (`fold_operator_earned()`), so a read sums a few rows however long the operator's history
 * (migrations/0038_operator_earned.sql). `npm run verify` checks the sums against the records.
 */
export const operatorEarned = pgTable(
  "operator_earned",
  {
    marketplaceId: text("marketplace_id").notNull(),
    operatorId: text("operator_id").notNull(),
    assetId: uuid("asset_id").notNull(),
    /** A part: negative for reversals. */
    amount: numeric("amount").notNull(),
    /** True for a fold's sum; a trigger's part is false until a fold takes it, so a fold reads only the keys with new parts. */
    folded: boolean("folded").notNull().default(false),
  },
  (t) => [
    index("operator_earned_operator_idx").on(t.operatorId, t.assetId),
    index("operator_earned_unfolded_idx")
      .on(t.marketplaceId, t.operatorId, t.assetId)
      .where(sql`not ${t.folded}`),
  ],
);

/**
 * A funding mark of a marketplace in an asset (docs/ledger.md, "The funding mark"): every usage
 * record of it with a `funding_seq` up to `funding_seq` here is counted, reversed or not, in the
 * gross per customer kept in usage_funding_mark_customers. When the money a judgment sees funds
 * every record up to the mark, the judgment walks only the records after it. Written by the
 * workers only (src/services/funding-marks.ts); a judgment checks the mark against the money each
 * time, and `npm run verify` checks it against the records.
 */
export const usageFundingMarks = pgTable(
  "usage_funding_marks",
  {
    marketplaceId: text("marketplace_id").notNull(),
    assetId: uuid("asset_id").notNull(),
    fundingSeq: bigint("funding_seq", { mode: "bigint" }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.marketplaceId, t.assetId] })],
);

/** Per customer, the gross of the marketplace's usage records (reversed included) up to its funding mark. */
export const usageFundingMarkCustomers = pgTable(
  "usage_funding_mark_customers",
  {
    marketplaceId: text("marketplace_id").notNull(),
    assetId: uuid("asset_id").notNull(),
    customerId: text("customer_id").notNull(),
    gross: numeric("gross", { precision: 78, scale: 0 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.marketplaceId, t.assetId, t.customerId] })],
);
