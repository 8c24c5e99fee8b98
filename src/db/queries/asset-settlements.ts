import { and, asc, count, desc, eq, inArray } from "drizzle-orm";
import type { Queryable } from "../client.js";
import { orm, run } from "../orm.js";
import { assetSettlements, chainCursors, payouts } from "../schema/index.js";

/** An asset's settlement history (src/services/asset-settings.ts): one version per row, append-only. */

export interface SettlementVersionRow {
  version: number;
  settlement: "erc20" | "native" | "offchain";
  chain_id: string | null;
  token_address: string | null;
  valid_from: Date;
  proposal_id: string | null;
  proposed_by: string | null;
  approved_by: string | null;
}

export async function insertSettlementVersion(
  tx: Queryable,
  v: {
    assetId: string;
    version: number;
    settlement: "erc20" | "native" | "offchain";
    chainId: string | null;
    tokenAddress: string | null;
    validFrom: Date;
    proposalId?: string;
    proposedBy?: string;
    approvedBy?: string;
  },
): Promise<void> {
  await run(
    orm(tx)
      .insert(assetSettlements)
      .values({
        assetId: v.assetId,
        version: v.version,
        settlement: v.settlement,
        chainId: v.chainId === null ? null : BigInt(v.chainId),
        tokenAddress: v.tokenAddress,
        validFrom: v.validFrom,
        proposalId: v.proposalId ?? null,
        proposedBy: v.proposedBy ?? null,
        approvedBy: v.approvedBy ?? null,
      }),
  );
}

/** Every version of an asset's settlement, oldest first. */
export async function listSettlementVersions(db: Queryable, assetId: string): Promise<SettlementVersionRow[]> {
  const s = assetSettlements;
  const rows = await run(
    orm(db)
      .select({
        version: s.version,
        settlement: s.settlement,
        chain_id: s.chainId,
        token_address: s.tokenAddress,
        valid_from: s.validFrom,
        proposal_id: s.proposalId,
        proposed_by: s.proposedBy,
        approved_by: s.approvedBy,
      })
      .from(s)
      .where(eq(s.assetId, assetId))
      .orderBy(asc(s.version)),
  );
  return rows.map((r) => ({
    ...r,
    settlement: r.settlement as SettlementVersionRow["settlement"],
    chain_id: r.chain_id === null ? null : String(r.chain_id),
    valid_from: new Date(r.valid_from),
  }));
}

/** The number of an asset's latest settlement version (0 when none is recorded). */
export async function latestSettlementVersion(tx: Queryable, assetId: string): Promise<number> {
  const [row] = await run(
    orm(tx)
      .select({ version: assetSettlements.version })
      .from(assetSettlements)
      .where(eq(assetSettlements.assetId, assetId))
      .orderBy(desc(assetSettlements.version))
      .limit(1),
  );
  return row?.version ?? 0;
}

/** The payouts of an asset not yet ended (pending, batched, signed or submitted), counted by status. */
export async function countPayoutsInFlight(tx: Queryable, assetId: string): Promise<Map<string, number>> {
  const rows = await run(
    orm(tx)
      .select({ status: payouts.status, n: count() })
      .from(payouts)
      .where(and(eq(payouts.assetId, assetId), inArray(payouts.status, ["pending", "batched", "signed", "submitted"])))
      .groupBy(payouts.status),
  );
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}

/** Forgets where the deposit scanner stopped in an asset: it starts again from the chain settings' deposit_start_block. */
export async function resetDepositCursors(tx: Queryable, assetId: string): Promise<void> {
  await run(orm(tx).delete(chainCursors).where(eq(chainCursors.assetId, assetId)));
}
