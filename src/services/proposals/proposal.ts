import type { Queryable } from "../../db/client.js";
import { getAssetByCode } from "../../db/queries/assets.js";
import { findOpenProposal, getProposalRow, insertProposal, listProposalRows, lockProposalForDecision, type ProposalRow } from "../../db/queries/proposals.js";
import type { ProposalParty, ProposalStatus } from "../../domain/proposals.js";
import { type Asset } from "../../domain/assets.js";
import { LedgerError } from "../../domain/errors.js";
import { uuidv7 } from "../../domain/ids.js";
import { withArticle, type Principal } from "../../domain/access.js";
import { PROPOSAL_ROLES, type ProposalKind } from "../../domain/proposals.js";
import { getMarketplace } from "../marketplaces.js";

/**
 * Four eyes for manual money (docs/ledger.md, "Four eyes"). A movement of money or a limit change
 * that a person asks for is a proposal; it takes effect only when a different key, of a role
 * allowed to approve that kind, approves it. A proposal is decided once: approved (and carried out
 * in the same database transaction) or rejected. Who proposed and who decided are on the row; the
 * calls themselves are in the audit log.
 */

export { PROPOSAL_KINDS, PROPOSAL_ROLES, proposalConcerns, type ProposalKind, type ProposalParty, type ProposalStatus } from "../../domain/proposals.js";

export interface Proposal {
  id: string;
  kind: ProposalKind;
  marketplaceId: string | null;
  payload: Record<string, unknown>;
  proposedBy: string;
  proposedAt: Date;
  status: ProposalStatus;
  decidedBy: string | null;
  decidedAt: Date | null;
  reason: string | null;
  result: Record<string, unknown> | null;
}

export const toProposal = (r: ProposalRow): Proposal => ({
  id: r.id,
  kind: r.kind,
  marketplaceId: r.marketplace_id,
  payload: r.payload,
  proposedBy: r.proposed_by,
  proposedAt: new Date(r.proposed_at),
  status: r.status,
  decidedBy: r.decided_by,
  decidedAt: r.decided_at === null ? null : new Date(r.decided_at),
  reason: r.reason,
  result: r.result,
});

export async function getProposal(db: Queryable, id: string, forUpdate = false): Promise<Proposal | undefined> {
  const row = forUpdate ? await lockProposalForDecision(db, id) : await getProposalRow(db, id);
  return row && toProposal(row);
}

export async function listProposals(
  db: Queryable,
  f: { status?: ProposalStatus; kind?: ProposalKind; marketplaceId?: string; party?: ProposalParty; afterId?: string; limit: number },
): Promise<Proposal[]> {
  const rows = await listProposalRows(db, f);
  return rows.map(toProposal);
}

export function mayPropose(p: Principal, kind: ProposalKind): void {
  if (!PROPOSAL_ROLES[kind].propose.includes(p.role)) {
    throw new LedgerError(
      "forbidden",
      `${withArticle(p.role)} key may not propose ${withArticle(kind)}; ${PROPOSAL_ROLES[kind].propose.join(" or ")} keys may`,
    );
  }
}

/** Records a new proposal of `kind`, proposed by `p` now. */
export async function recordProposal(
  db: Queryable,
  now: Date,
  p: Principal,
  kind: ProposalKind,
  marketplaceId: string | null,
  payload: Record<string, unknown>,
): Promise<Proposal> {
  const row = await insertProposal(db, { id: uuidv7(), kind, marketplaceId, payload, proposedBy: p.keyId, proposedAt: now });
  return toProposal(row);
}

/** The same change asked again by the same key while it is open answers the open proposal; else a new one. */
export async function openOrInsert(
  db: Queryable,
  now: Date,
  by: Principal,
  kind: ProposalKind,
  marketplaceId: string | null,
  payload: Record<string, unknown>,
): Promise<Proposal> {
  const open = await findOpenProposal(db, kind, by.keyId, payload);
  if (open) return toProposal(open);
  return recordProposal(db, now, by, kind, marketplaceId, payload);
}

export async function requireAsset(db: Queryable, code: string): Promise<Asset> {
  const asset = await getAssetByCode(db, code);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${code} does not exist`, [{ path: "asset", message: "does not exist" }]);
  return asset;
}

export async function requireMarketplace(db: Queryable, id: string): Promise<void> {
  if (!(await getMarketplace(db, id))) throw new LedgerError("marketplace_not_found", `marketplace ${id} does not exist`);
}

/** What a proposal use case takes: the change, when it is proposed and who proposes it. */
export type Proposing<T, By = Principal> = T & { now: Date; by: By };
