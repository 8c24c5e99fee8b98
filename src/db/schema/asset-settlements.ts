import { sql } from "drizzle-orm";
import { bigint, check, integer, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { assets } from "./assets.js";

/**
 * Every version of how an asset settles (append-only): version 1 as registered, each later one
 * from an approved proposal. A version is in force from its valid_from until the next version's.
 */
export const assetSettlements = pgTable(
  "asset_settlements",
  {
    assetId: uuid("asset_id")
      .notNull()
      .references(() => assets.id),
    version: integer("version").notNull(),
    settlement: text("settlement").notNull(),
    chainId: bigint("chain_id", { mode: "bigint" }),
    tokenAddress: text("token_address"),
    validFrom: timestamp("valid_from", { withTimezone: true }).notNull(),
    /** The approved proposal that made this version; null for the version the asset was registered with. */
    proposalId: uuid("proposal_id"),
    proposedBy: text("proposed_by"),
    approvedBy: text("approved_by"),
  },
  (t) => [
    primaryKey({ columns: [t.assetId, t.version] }),
    check("asset_settlements_version", sql`${t.version} >= 1`),
    check(
      "asset_settlements_shape",
      sql`(${t.settlement} = 'erc20' and ${t.chainId} is not null and ${t.tokenAddress} is not null)
       or (${t.settlement} = 'native' and ${t.chainId} is not null and ${t.tokenAddress} is null)
       or (${t.settlement} = 'offchain' and ${t.chainId} is null and ${t.tokenAddress} is null)`,
    ),
    check("asset_settlements_approval", sql`(${t.version} = 1) = (${t.proposalId} is null)`),
  ],
);
