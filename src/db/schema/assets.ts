import { sql } from "drizzle-orm";
import { bigint, check, integer, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";

/**
 * A unit of value: its code, its scale (decimals) and how it settles. The code and scale are fixed
 * (amounts recorded depend on them); how it settles changes only through an approved proposal, each
 * version kept in asset_settlements.
 */
export const assets = pgTable(
  "assets",
  {
    id: uuid("id").primaryKey(),
    code: text("code").notNull().unique(),
    scale: integer("scale").notNull(),
    /** erc20: a token contract on chain_id at token_address; native: the gas token of chain_id; offchain: settled outside any chain. */
    settlement: text("settlement").notNull(),
    chainId: bigint("chain_id", { mode: "bigint" }),
    tokenAddress: text("token_address"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** When it was retired: no new accounts, transfers, usage, holds or deposits in it; what is in it can still be paid out. */
    retiredAt: timestamp("retired_at", { withTimezone: true }),
    /** Conversions into this asset use no rate observed longer ago than this. */
    rateMaxAgeSeconds: integer("rate_max_age_seconds").notNull().default(3600),
    /** Conversions into this asset stop while two sources of its rate are further apart than this. */
    rateMaxDeviationBps: integer("rate_max_deviation_bps").notNull().default(100),
  },
  (t) => [
    check("assets_scale_range", sql`${t.scale} between 0 and 77`),
    check("assets_settlement_kind", sql`${t.settlement} in ('erc20', 'native', 'offchain')`),
    check(
      "assets_settlement_shape",
      sql`(${t.settlement} = 'erc20' and ${t.chainId} is not null and ${t.tokenAddress} is not null)
       or (${t.settlement} = 'native' and ${t.chainId} is not null and ${t.tokenAddress} is null)
       or (${t.settlement} = 'offchain' and ${t.chainId} is null and ${t.tokenAddress} is null)`,
    ),
    uniqueIndex("assets_chain_token_uq").on(t.chainId, t.tokenAddress),
    // A chain's native token settles one asset too (the index above does not see it: its token is null).
    uniqueIndex("assets_chain_native_uq")
      .on(t.chainId)
      .where(sql`${t.settlement} = 'native'`),
    check("assets_rate_bounds", sql`${t.rateMaxAgeSeconds} between 1 and 31536000 and ${t.rateMaxDeviationBps} between 0 and 10000`),
  ],
);
