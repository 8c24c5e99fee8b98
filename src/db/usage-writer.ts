import type { UsageRecord } from "./queries/usage.js";
import type { Queryable } from "./client.js";
import { pgArray } from "./sql-arrays.js";

/** Inserts rated usage rows with one statement; returns how many were new (repeats are skipped). */
export async function insertUsageRecords(tx: Queryable, records: UsageRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  const col = <T extends string | bigint | number | boolean | null>(f: (r: UsageRecord) => T) => pgArray(records.map(f));
  const rows = await tx.query(
    `insert into usage_records (id, marketplace_id, external_id, request_hash, operator_id, customer_id, resource, unit, quantity,
                                unit_price, asset_id, gross, net, fees, fee_schedule_version, period_start, period_end,
                                effective_at, hold_id, transfer_id, metadata, created_at)
     select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                          $9::numeric[], $10::numeric[], $11::uuid[], $12::numeric[], $13::numeric[], $14::jsonb[], $15::int[],
                          $16::timestamptz[], $17::timestamptz[], $18::timestamptz[], $19::uuid[], $20::uuid[], $21::jsonb[], $22::timestamptz[])
     on conflict do nothing
     returning id`,
    [
      col((r) => r.id), col((r) => r.marketplaceId), col((r) => r.externalId), col((r) => r.requestHash), col((r) => r.operatorId),
      col((r) => r.customerId), col((r) => r.resource), col((r) => r.unit), col((r) => r.quantity), col((r) => r.unitPrice),
      col((r) => r.assetId), col((r) => r.gross), col((r) => r.net),
      col((r) => JSON.stringify(r.fees.map((f) => ({ party: f.party, account_id: f.accountId, amount: f.amount.toString() })))),
      col((r) => r.feeScheduleVersion), col((r) => r.periodStart.toISOString()), col((r) => r.periodEnd.toISOString()),
      col((r) => r.effectiveAt.toISOString()), col((r) => r.holdId), col((r) => r.transferId), col((r) => JSON.stringify(r.metadata)),
      col((r) => r.createdAt.toISOString()),
    ],
  );
  return rows.length;
}
