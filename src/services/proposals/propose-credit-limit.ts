import type { Queryable } from "../../db/client.js";
import { LedgerError } from "../../domain/errors.js";
import { isTransferAmount } from "../../domain/money.js";
import { mayPropose, recordProposal, requireAsset, requireMarketplace, type Proposal, type Proposing } from "./proposal.js";

/** Proposes a marketplace's credit limit in an asset: how much of its unpaid usage the platform advances. */
export async function proposeCreditLimit(
  db: Queryable,
  { now, by, ...input }: Proposing<{ marketplaceId: string; asset: string; creditLimit: bigint }>,
): Promise<Proposal> {
  mayPropose(by, "credit_limit");
  await requireMarketplace(db, input.marketplaceId);
  const asset = await requireAsset(db, input.asset);
  if (input.creditLimit < 0n || !isTransferAmount(input.creditLimit + 1n))
    throw new LedgerError("invalid_request", "credit_limit must be an integer from 0 to 2^256 - 2", [{ path: "credit_limit", message: "out of range" }]);
  return recordProposal(db, now, by, "credit_limit", input.marketplaceId, {
    marketplace_id: input.marketplaceId,
    asset: asset.code,
    asset_id: asset.id,
    credit_limit: input.creditLimit.toString(),
  });
}
