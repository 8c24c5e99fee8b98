import { z } from "zod";
import type { Queryable } from "../../db/client.js";
import { countPayoutsInFlight, insertSettlementVersion, latestSettlementVersion, resetDepositCursors } from "../../db/queries/asset-settlements.js";
import { findAssetByToken, lockAssetByCode, updateAssetSettlement } from "../../db/queries/assets.js";
import { findNativeAsset } from "../../db/queries/chain-transactions.js";
import type { Principal } from "../../domain/access.js";
import { checkSettlementChange, describeSettlement, sameSettlement, type Asset, type AssetSettlement } from "../../domain/assets.js";
import { LedgerError } from "../../domain/errors.js";
import { SettlementInput } from "../create-asset.js";
import { parseInput } from "../validation.js";
import { mayPropose, openOrInsert, requireAsset, type Proposal, type Proposing } from "./proposal.js";

const SettlementChange = z.strictObject({ settlement: SettlementInput });

/**
 * Where an asset's payouts go (docs/api.md, "Changing and retiring"): its token and chain change
 * only when a second, independent key approves, as every change of where money goes does. The
 * proposal names the settlement it replaces: approving it after the asset changed otherwise is
 * refused (proposal_outdated), so that nobody approves a change other than the one shown.
 */
export async function proposeAssetSettlement(db: Queryable, { now, by, ...input }: Proposing<{ asset: string; settlement: unknown }>): Promise<Proposal> {
  mayPropose(by, "asset_settlement");
  const to = normalized(parseInput(SettlementChange, { settlement: input.settlement }).settlement);
  const asset = await requireAsset(db, input.asset);
  checkSettlementChange(asset.code, asset.settlement, to);
  await refuseTakenToken(db, asset, to);
  await refusePayoutsInFlight(db, asset);
  const payload = { asset: asset.code, asset_id: asset.id, from: settlementWire(asset.settlement), to: settlementWire(to) };
  return openOrInsert(db, now, by, "asset_settlement", null, payload);
}

/**
 * Carries out an approved proposal, inside the decision's transaction: with the asset's row
 * locked, the asset must still settle as the proposal says it did and have no payout on its way;
 * then the new settlement is in force from `at`, as the next version of its history. The deposit
 * scanner starts again from the chain settings' deposit_start_block for the new token.
 */
export async function applyAssetSettlement(tx: Queryable, p: Proposal, by: Principal, at: Date): Promise<Record<string, unknown>> {
  const asset = await lockAssetByCode(tx, String(p.payload.asset));
  if (!asset) throw new LedgerError("asset_not_found", `asset ${String(p.payload.asset)} does not exist`);
  const from = fromWire(p.payload.from);
  const to = fromWire(p.payload.to);
  if (!sameSettlement(asset.settlement, from)) {
    throw new LedgerError(
      "proposal_outdated",
      `asset ${asset.code} settles as ${describeSettlement(asset.settlement)} now, not as ${describeSettlement(from)} as when proposal ${p.id} was made: reject it and propose the change again`,
    );
  }
  checkSettlementChange(asset.code, asset.settlement, to);
  await refuseTakenToken(tx, asset, to);
  await refusePayoutsInFlight(tx, asset);
  const wire = settlementWire(to);
  await updateAssetSettlement(tx, asset.id, {
    settlement: to.kind,
    chainId: wire.chain_id === undefined ? null : String(wire.chain_id),
    tokenAddress: wire.token_address ?? null,
  });
  const version = (await latestSettlementVersion(tx, asset.id)) + 1;
  await insertSettlementVersion(tx, {
    assetId: asset.id,
    version,
    settlement: to.kind,
    chainId: wire.chain_id === undefined ? null : String(wire.chain_id),
    tokenAddress: wire.token_address ?? null,
    validFrom: at,
    proposalId: p.id,
    proposedBy: p.proposedBy,
    approvedBy: by.keyId,
  });
  await resetDepositCursors(tx, asset.id);
  return { asset: asset.code, version, settlement: wire, valid_from: at.toISOString() };
}

/** The settlement as the API writes it (snake_case, addresses in lowercase). */
export function settlementWire(s: AssetSettlement): { kind: AssetSettlement["kind"]; chain_id?: number; token_address?: string } {
  if (s.kind === "erc20") return { kind: s.kind, chain_id: s.chainId, token_address: s.tokenAddress.toLowerCase() };
  if (s.kind === "native") return { kind: s.kind, chain_id: s.chainId };
  return { kind: s.kind };
}

function fromWire(raw: unknown): AssetSettlement {
  const w = raw as { kind: AssetSettlement["kind"]; chain_id?: number; token_address?: string };
  if (w.kind === "erc20") return { kind: "erc20", chainId: Number(w.chain_id), tokenAddress: String(w.token_address) };
  if (w.kind === "native") return { kind: "native", chainId: Number(w.chain_id) };
  return { kind: "offchain" };
}

const normalized = (s: AssetSettlement): AssetSettlement => (s.kind === "erc20" ? { ...s, tokenAddress: s.tokenAddress.toLowerCase() } : s);

/** A token and chain (or a chain's native token) settle one asset: another asset's is refused (asset_exists). */
async function refuseTakenToken(db: Queryable, asset: Asset, to: AssetSettlement): Promise<void> {
  if (to.kind === "offchain") return;
  const holder =
    to.kind === "erc20" ? await findAssetByToken(db, String(to.chainId), to.tokenAddress.toLowerCase()) : await findNativeAsset(db, BigInt(to.chainId));
  if (holder && holder.id !== asset.id) {
    throw new LedgerError("asset_exists", `asset ${holder.code} settles as ${describeSettlement(to)} already: a token and chain settle one asset`);
  }
}

/**
 * Payouts not yet ended were asked for, or signed, on the current settlement: a transaction
 * signed for the old token would be checked against the new one, and a pending payout's address
 * was proven on the old chain. The change waits until they confirm, fail or are cancelled. (A
 * payout whose request is committing while the approval counts is not seen; on a change of chain
 * it fails in the worker's simulation and its hold is voided: it fails closed, never pays twice.)
 */
async function refusePayoutsInFlight(db: Queryable, asset: Asset): Promise<void> {
  const counts = await countPayoutsInFlight(db, asset.id);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  if (total === 0) return;
  const byStatus = ["pending", "batched", "signed", "submitted"].flatMap((s) => (counts.has(s) ? [`${counts.get(s)} ${s}`] : []));
  throw new LedgerError(
    "payouts_in_flight",
    `${total} payout${total === 1 ? "" : "s"} of asset ${asset.code} ${total === 1 ? "is" : "are"} on ${total === 1 ? "its" : "their"} way on the current settlement (${byStatus.join(", ")}): ` +
      "change how it settles once they have ended (a pending payout can be cancelled: POST /v1/payouts/{id}/cancel; the others end when confirmed or failed)",
  );
}
