import type { Queryable } from "../db/client.js";
import { listSettlementVersions } from "../db/queries/asset-settlements.js";
import { getAssetByCode } from "../db/queries/assets.js";
import type { Asset, AssetSettlement } from "../domain/assets.js";

/** One version of how an asset settles, and when it was in force: [validFrom, validTo), validTo null for the current one. */
export interface SettlementVersion {
  version: number;
  settlement: AssetSettlement;
  validFrom: Date;
  validTo: Date | null;
  /** The approved proposal that made it (null: as registered), who proposed it and who approved it. */
  proposalId: string | null;
  proposedBy: string | null;
  approvedBy: string | null;
}

/** An asset with the history of how it settled, oldest first; undefined when there is no such asset. */
export async function getAssetWithHistory(db: Queryable, code: string): Promise<{ asset: Asset; history: SettlementVersion[] } | undefined> {
  const asset = await getAssetByCode(db, code);
  if (!asset) return undefined;
  const rows = await listSettlementVersions(db, asset.id);
  const history = rows.map((r, i): SettlementVersion => {
    const chainId = Number(r.chain_id);
    const settlement: AssetSettlement =
      r.settlement === "erc20"
        ? { kind: "erc20", chainId, tokenAddress: r.token_address! }
        : r.settlement === "native"
          ? { kind: "native", chainId }
          : { kind: "offchain" };
    return {
      version: r.version,
      settlement,
      validFrom: r.valid_from,
      validTo: rows[i + 1]?.valid_from ?? null,
      proposalId: r.proposal_id,
      proposedBy: r.proposed_by,
      approvedBy: r.approved_by,
    };
  });
  return { asset, history };
}
