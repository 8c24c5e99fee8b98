import type { Queryable } from "../db/client.js";
import {
  disputeItemRows,
  disputeWindowOf,
  getDisputeRow,
  insertDispute,
  insertDisputeEvent,
  insertDisputeItems,
  listDisputeRows,
  openDisputesOf,
  upsertDisputeWindow,
  type DisputeFilter,
  type DisputeRow,
} from "../db/queries/disputes.js";
import { findUsageByExternalIds, getUsage } from "../db/queries/usage.js";
import type { Principal } from "../domain/access.js";
import { checkInWindow, DEFAULT_DISPUTE_WINDOW_DAYS, type Dispute } from "../domain/disputes.js";
import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import type { UsageRecord } from "../domain/usage.js";
import { lockOperatorPayables } from "./funding.js";
import { getMarketplace } from "./marketplaces.js";

/**
 * Disputes of usage records (docs/reconciliation.md, "Disputes"): opening one, reading them, and
 * marketplaces' dispute windows. Deciding one is decide-dispute.ts.
 */

export interface OpenDisputeInput {
  by: Principal;
  now: Date;
  /** The marketplace whose records are named by external id (a marketplace key: its own). */
  marketplaceId?: string;
  usageIds?: string[];
  externalIds?: string[];
  reason: string;
}

const notFound = (what: string) =>
  new LedgerError("usage_not_found", `usage record ${what} does not exist`, [{ path: "usage_ids", message: `${what} does not exist` }]);

/**
 * Opens a dispute of records of one marketplace, in the caller's transaction: under the funding
 * locks of their operators (payouts and reversals of them wait), each record must be posted (not
 * reversed), in no open dispute, and inside its marketplace's window. A marketplace key disputes only
 * its own records (another's answer as missing ones).
 */
export async function openDispute(tx: Queryable, input: OpenDisputeInput): Promise<Dispute> {
  const records = await recordsNamed(tx, input);
  const marketplaceId = records[0]!.marketplaceId;
  await lockOperatorPayables(
    tx,
    records.map((r) => ({ operatorId: r.operatorId, assetId: r.assetId })),
  );
  const fresh: UsageRecord[] = [];
  for (const r of records) fresh.push((await getUsage(tx, r.id))!);
  const reversed = fresh.find((r) => r.status === "reversed");
  if (reversed) throw new LedgerError("already_reversed", `usage record ${reversed.id} was already reversed: there is nothing left to dispute`);
  const [open] = await openDisputesOf(
    tx,
    fresh.map((r) => r.id),
  );
  if (open) {
    const message = `usage record ${open.usage_id} is in open dispute ${open.dispute_id}`;
    throw new LedgerError("usage_disputed", message, [{ path: "usage_ids", message: `record ${open.usage_id} is in open dispute ${open.dispute_id}` }]);
  }
  const windowDays = (await disputeWindowOf(tx, marketplaceId))?.days ?? DEFAULT_DISPUTE_WINDOW_DAYS;
  for (const r of fresh) checkInWindow(r, windowDays, input.now, marketplaceId);
  const id = uuidv7(input.now.getTime());
  await insertDispute(tx, { id, marketplaceId, reason: input.reason, openedBy: input.by.keyId, openedAt: input.now });
  await insertDisputeItems(
    tx,
    id,
    fresh.map((r) => ({ usageId: r.id, operatorId: r.operatorId, assetId: r.assetId, net: r.net })),
  );
  await insertDisputeEvent(tx, { disputeId: id, status: "open", at: input.now, by: input.by.keyId, detail: { reason: input.reason, records: fresh.length } });
  return (await getDispute(tx, id, input.by))!;
}

/** The records a dispute names, all of one marketplace the key may act for. */
async function recordsNamed(tx: Queryable, input: OpenDisputeInput): Promise<UsageRecord[]> {
  const p = input.by;
  // Another marketplace's records answer as missing ones, whichever way they are named.
  if (p.role === "marketplace" && input.marketplaceId !== undefined && input.marketplaceId !== p.scopeId) {
    throw new LedgerError("usage_not_found", `marketplace ${input.marketplaceId} has no usage records this key may dispute`, [
      { path: "marketplace_id", message: "not found" },
    ]);
  }
  if (input.usageIds !== undefined) {
    const records: UsageRecord[] = [];
    for (const id of [...new Set(input.usageIds)]) {
      const r = await getUsage(tx, id);
      if (!r || (p.role === "marketplace" && r.marketplaceId !== p.scopeId)) throw notFound(id);
      records.push(r);
    }
    const markets = new Set(records.map((r) => r.marketplaceId).concat(input.marketplaceId ?? []));
    if (markets.size > 1) {
      throw new LedgerError("invalid_request", "a dispute's records belong to one marketplace", [
        { path: "usage_ids", message: "must be records of one marketplace" },
      ]);
    }
    return records;
  }
  const marketplaceId = p.role === "marketplace" ? p.scopeId! : input.marketplaceId;
  if (marketplaceId === undefined) {
    throw new LedgerError("invalid_request", `${p.role} keys name the marketplace_id of records given by external id`, [
      { path: "marketplace_id", message: `is required with external_ids for ${p.role} keys` },
    ]);
  }
  if (!(await getMarketplace(tx, marketplaceId))) throw new LedgerError("marketplace_not_found", `marketplace ${marketplaceId} does not exist`);
  const externalIds = [...new Set(input.externalIds ?? [])];
  const found = await findUsageByExternalIds(
    tx,
    externalIds.map((externalId) => ({ marketplaceId, externalId })),
  );
  return externalIds.map((e) => {
    const r = found.get(`${marketplaceId}|${e}`);
    if (!r) throw new LedgerError("usage_not_found", `usage record ${e} does not exist`, [{ path: "external_ids", message: `${e} does not exist` }]);
    return r;
  });
}

/**
 * What a key may see of a dispute: admin and finance all of it, its marketplace all of it, an
 * operator only its own records (and a dispute without any is none of its business).
 */
function scopeOf(p: Principal): { marketplaceId?: string; operatorId?: string } {
  if (p.role === "marketplace") return { marketplaceId: p.scopeId! };
  if (p.role === "operator") return { operatorId: p.scopeId! };
  return {};
}

async function withItems(db: Queryable, rows: DisputeRow[], operatorId: string | undefined): Promise<Dispute[]> {
  const items = await disputeItemRows(
    db,
    rows.map((r) => r.id),
    operatorId ?? null,
  );
  return rows.map((r) => ({
    id: r.id,
    marketplaceId: r.marketplace_id,
    status: r.status,
    reason: r.reason,
    openedBy: r.opened_by,
    openedAt: new Date(r.opened_at),
    decidedBy: r.decided_by,
    decidedAt: r.decided_at === null ? null : new Date(r.decided_at),
    decisionNote: r.decision_note,
    items: items
      .filter((i) => i.dispute_id === r.id)
      .map((i) => ({
        usageId: i.usage_id,
        externalId: i.external_id,
        operatorId: i.operator_id,
        assetId: i.asset_id,
        asset: i.asset,
        scale: i.scale,
        net: BigInt(i.net),
        gross: BigInt(i.gross),
        usageStatus: i.reversed ? ("reversed" as const) : ("posted" as const),
      })),
  }));
}

/** A dispute as the key may see it, or undefined when it may not (another marketplace's: as missing). */
export async function getDispute(db: Queryable, id: string, by: Principal): Promise<Dispute | undefined> {
  const row = await getDisputeRow(db, id);
  const scope = scopeOf(by);
  if (!row || (scope.marketplaceId !== undefined && row.marketplace_id !== scope.marketplaceId)) return undefined;
  const [d] = await withItems(db, [row], scope.operatorId);
  return scope.operatorId !== undefined && d!.items.length === 0 ? undefined : d;
}

/** Disputes the key may see, oldest first, after a cursor. */
export async function listDisputes(db: Queryable, by: Principal, f: Omit<DisputeFilter, "operatorId">): Promise<Dispute[]> {
  const scope = scopeOf(by);
  const marketplaceId = scope.marketplaceId ?? f.marketplaceId;
  if (scope.marketplaceId !== undefined && f.marketplaceId !== undefined && f.marketplaceId !== scope.marketplaceId) return [];
  return withItems(db, await listDisputeRows(db, { ...f, marketplaceId, operatorId: scope.operatorId }), scope.operatorId);
}

export interface DisputeWindow {
  marketplaceId: string;
  days: number;
  /** True when no admin set it: the service's default. */
  isDefault: boolean;
  updatedBy: string | null;
  updatedAt: Date | null;
}

export async function getDisputeWindow(db: Queryable, marketplaceId: string): Promise<DisputeWindow | undefined> {
  if (!(await getMarketplace(db, marketplaceId))) return undefined;
  const set = await disputeWindowOf(db, marketplaceId);
  return set
    ? { marketplaceId, days: set.days, isDefault: false, updatedBy: set.updated_by, updatedAt: new Date(set.updated_at) }
    : { marketplaceId, days: DEFAULT_DISPUTE_WINDOW_DAYS, isDefault: true, updatedBy: null, updatedAt: null };
}

/** Sets a marketplace's dispute window (an admin's decision: a limit on the marketplace, not its own). */
export async function setDisputeWindow(tx: Queryable, s: { marketplaceId: string; days: number; by: string; now: Date }): Promise<DisputeWindow> {
  if (!(await getMarketplace(tx, s.marketplaceId))) throw new LedgerError("marketplace_not_found", `marketplace ${s.marketplaceId} does not exist`);
  await upsertDisputeWindow(tx, { marketplaceId: s.marketplaceId, days: s.days, by: s.by, at: s.now });
  return (await getDisputeWindow(tx, s.marketplaceId))!;
}
