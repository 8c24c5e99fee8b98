import { OPERATOR_PROPOSAL_KINDS, type ProposalKind, type ProposalParty, type ProposalStatus } from "../../domain/proposals.js";
import type { Queryable } from "../client.js";
import { pgArray } from "../sql-arrays.js";

/** Proposals: four eyes for manual money (src/services/proposals/, docs/ledger.md "Four eyes"). */

/** A row of proposals. */
export interface ProposalRow {
  id: string;
  kind: ProposalKind;
  marketplace_id: string | null;
  payload: Record<string, unknown>;
  proposed_by: string;
  proposed_at: Date | string;
  status: ProposalStatus;
  decided_by: string | null;
  decided_at: Date | string | null;
  reason: string | null;
  result: Record<string, unknown> | null;
}

export async function getProposalRow(db: Queryable, id: string): Promise<ProposalRow | undefined> {
  const rows = await db.query<ProposalRow>(`select * from proposals where id = $1`, [id]);
  return rows[0];
}

/** The proposal with its row locked until the transaction ends, so that it is decided once. */
export async function lockProposalForDecision(tx: Queryable, id: string): Promise<ProposalRow | undefined> {
  const rows = await tx.query<ProposalRow>(`select * from proposals where id = $1 for update`, [id]);
  return rows[0];
}

/** Proposals newest first (ids are time-ordered), filtered; `afterId`: the last of the previous page. */
export async function listProposalRows(
  db: Queryable,
  f: { status?: ProposalStatus; kind?: string; marketplaceId?: string; party?: ProposalParty; afterId?: string; limit: number },
): Promise<ProposalRow[]> {
  // The party's proposals (proposalConcerns, src/domain/proposals.ts), as SQL.
  return db.query<ProposalRow>(
    `select * from proposals where ($1::text is null or status = $1) and ($2::text is null or kind = $2) and ($3::text is null or marketplace_id = $3)
        and ($4::uuid is null or id < $4)
        and ($6::text is null
             or ($6 = 'marketplace' and marketplace_id = $7)
             or ($6 = 'operator' and kind = any($8::text[]) and payload->>'operator_id' = $7))
      order by id desc limit $5`,
    [
      f.status ?? null,
      f.kind ?? null,
      f.marketplaceId ?? null,
      f.afterId ?? null,
      f.limit,
      f.party?.role ?? null,
      f.party?.id ?? null,
      pgArray([...OPERATOR_PROPOSAL_KINDS]),
    ],
  );
}

export async function insertProposal(
  db: Queryable,
  p: { id: string; kind: ProposalKind; marketplaceId: string | null; payload: Record<string, unknown>; proposedBy: string; proposedAt: Date },
): Promise<ProposalRow> {
  const rows = await db.query<ProposalRow>(
    `insert into proposals (id, kind, marketplace_id, payload, proposed_by, proposed_at) values ($1, $2, $3, $4::text::jsonb, $5, $6) returning *`,
    [p.id, p.kind, p.marketplaceId, JSON.stringify(p.payload), p.proposedBy, p.proposedAt.toISOString()],
  );
  return rows[0]!;
}

/** The proposal a payout above its policy's approval threshold waits for (no marketplace). */
export async function insertPayoutApprovalProposal(
  tx: Queryable,
  p: { id: string; payload: Record<string, unknown>; proposedBy: string; proposedAt: Date },
): Promise<ProposalRow> {
  const rows = await tx.query<ProposalRow>(
    `insert into proposals (id, kind, marketplace_id, payload, proposed_by, proposed_at) values ($1, 'payout', null, $2::text::jsonb, $3, $4) returning *`,
    [p.id, JSON.stringify(p.payload), p.proposedBy, p.proposedAt.toISOString()],
  );
  return rows[0]!;
}

/** An open proposal of this kind by this key with exactly this payload. */
export async function findOpenProposal(
  db: Queryable,
  kind: ProposalKind,
  proposedBy: string,
  payload: Record<string, unknown>,
): Promise<ProposalRow | undefined> {
  const open = await db.query<ProposalRow>(
    "select * from proposals where kind = $1 and status = 'proposed' and proposed_by = $2 and payload = $3::text::jsonb",
    [kind, proposedBy, JSON.stringify(payload)],
  );
  return open[0];
}

/**
 * The open usage_reversal proposal of a usage record, whoever proposed it, under a lock per record
 * held until the transaction ends (two proposals of one record at once: the second finds the first).
 */
export async function lockOpenUsageReversal(tx: Queryable, usageId: string): Promise<ProposalRow | undefined> {
  await tx.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [`usage-reversal:${usageId}`]);
  const [open] = await tx.query<ProposalRow>("select * from proposals where kind = 'usage_reversal' and status = 'proposed' and payload->>'usage_id' = $1", [
    usageId,
  ]);
  return open;
}

/** The id of a receipt proposal not rejected with this reference (compared as its key) in an asset. */
export async function findReceiptProposalIdByReference(db: Queryable, assetId: string, referenceKey: string): Promise<string | undefined> {
  const dup = await db.query<{ id: string }>(
    "select id from proposals where kind = 'receipt' and status <> 'rejected' and payload->>'asset_id' = $1 and payload->>'reference_key' = $2",
    [assetId, referenceKey],
  );
  return dup[0]?.id;
}

export type ReceiptByReferenceRow = { key: string; id: string; status: string };

/**
 * Receipt proposals not rejected whose reference names one of `txHashes` (0x and 64 hex digits,
 * lowercase): their reference key holds its 64 digits, however the reference spelled them ("0x…",
 * without 0x, in capitals, split by spaces or dashes, inside other words, o for 0, i or l for 1:
 * hashesReadAs); of one asset, or of any. A receipt in an off-chain unit names the payment in every
 * asset: a transaction carries no off-chain unit, so such a receipt stands for a token it paid in.
 * `key` is the hash.
 */
export async function receiptProposalsByReferenceKeys(db: Queryable, txHashes: string[], assetId: string | null = null): Promise<ReceiptByReferenceRow[]> {
  return db.query<ReceiptByReferenceRow>(
    `select h.key, p.id, p.status
       from proposals p join unnest($1::text[]) h(key) on strpos(translate(p.payload->>'reference_key', 'oil', '011'), substr(h.key, 3)) > 0
      where p.kind = 'receipt' and p.status <> 'rejected'
        and ($2::text is null or p.payload->>'asset_id' = $2
             or exists (select 1 from assets a where a.id::text = p.payload->>'asset_id' and a.settlement = 'offchain'))`,
    [pgArray(txHashes), assetId],
  );
}

/** Whether a receipt proposal not rejected names one of `txHashes` (receiptProposalsByReferenceKeys), of the asset. */
export async function hasReceiptProposalForReferenceKeys(tx: Queryable, txHashes: string[], assetId: string): Promise<boolean> {
  return (await receiptProposalsByReferenceKeys(tx, txHashes, assetId)).length > 0;
}

/** Serializes the proposals of an adjustment of one reconciliation item, until the transaction ends. */
export async function lockItemAdjustment(tx: Queryable, discrepancyKey: string): Promise<void> {
  await tx.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [`adjustment:${discrepancyKey}`]);
}

/** The id of the open adjustment proposal of a reconciliation item, if there is one. */
export async function findOpenAdjustmentProposalId(db: Queryable, itemId: bigint): Promise<string | undefined> {
  return (await findOpenAdjustmentProposal(db, [itemId.toString()]))?.id;
}

/** The open adjustment proposal of one of these reconciliation items, if there is one, with its item. */
export async function findOpenAdjustmentProposal(db: Queryable, itemIds: string[]): Promise<{ id: string; item_id: string } | undefined> {
  const [open] = await db.query<{ id: string; item_id: string }>(
    "select id, payload->>'item_id' as item_id from proposals where kind = 'reconciliation_adjustment' and status = 'proposed' and payload->>'item_id' = any($1::text[]) limit 1",
    [pgArray(itemIds)],
  );
  return open;
}

/** Decides a proposal still open; undefined when it was decided already. */
export async function recordDecision(
  tx: Queryable,
  d: { id: string; status: "approved" | "rejected"; decidedBy: string; decidedAt: Date; reason: string | null; result: Record<string, unknown> | null },
): Promise<ProposalRow | undefined> {
  const rows = await tx.query<ProposalRow>(
    `update proposals set status = $2, decided_by = $3, decided_at = $4, reason = $5, result = $6::text::jsonb where id = $1 and status = 'proposed' returning *`,
    [d.id, d.status, d.decidedBy, d.decidedAt.toISOString(), d.reason, d.result === null ? null : JSON.stringify(d.result)],
  );
  return rows[0];
}

/**
 * Every key that created `keyId`, directly or through keys it created, up to the bootstrap key (or
 * a key of unknown origin). The walk has no depth limit: a limit would let one person hide behind a
 * chain of keys longer than it (each key creating the next) and approve their own proposal. It
 * ends: a key's creator is an older key, and `union` drops a row seen before.
 */
export async function creatorsOfKey(db: Queryable, keyId: string): Promise<string[]> {
  const rows = await db.query<{ created_by: string }>(
    `with recursive up(id, created_by) as (
       select id::text, created_by from api_keys where id::text = $1
       union
       select k.id::text, k.created_by from api_keys k join up on k.id::text = up.created_by)
     select created_by from up where created_by is not null`,
    [keyId],
  );
  return rows.map((r) => r.created_by);
}

/** Marks a pending payout that waits for approval approved; false when it no longer waits (cancelled or failed). */
export async function approvePayoutAwaitingApproval(tx: Queryable, payoutId: string, at: Date): Promise<boolean> {
  const updated = await tx.query(
    "update payouts set approval = 'approved', note = null, updated_at = $2 where id = $1 and status = 'pending' and approval = 'required' returning id",
    [payoutId, at.toISOString()],
  );
  return updated.length > 0;
}
