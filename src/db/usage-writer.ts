import type { UsageRecord } from "../domain/usage.js";
import type { Queryable } from "./client.js";
import { pgColumns } from "./sql-arrays.js";

/**
 * Inserts rated usage rows with one statement; returns how many were new (repeats are skipped). The
 * same statement queues the operator's earnings of the records of marketplaces that lock the rate
 * at earning (docs/settlement.md, "Rate policy"): the caller holds those marketplaces' funding locks
 * in shared mode, which a change of policy takes exclusively, so a record follows one policy.
 */
export async function insertUsageRecords(tx: Queryable, records: UsageRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  const rows = await tx.query(
    `with usage_rows as (
     insert into usage_records (id, marketplace_id, external_id, request_hash, operator_id, customer_id, resource, unit, quantity,
                                unit_price, asset_id, gross, net, fees, fee_schedule_version, period_start, period_end,
                                effective_at, hold_id, transfer_id, metadata, created_at)
     select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                          $9::numeric[], $10::numeric[], $11::uuid[], $12::numeric[], $13::numeric[], $14::jsonb[], $15::int[],
                          $16::timestamptz[], $17::timestamptz[], $18::timestamptz[], $19::uuid[], $20::uuid[], $21::jsonb[], $22::timestamptz[])
     on conflict do nothing
     returning id, marketplace_id, operator_id, asset_id, net, created_at),
     queued as (
       insert into rate_lock_queue (usage_id, marketplace_id, operator_id, asset_id, net, queued_at)
       select ins.id, ins.marketplace_id, ins.operator_id, ins.asset_id, ins.net, ins.created_at
         from usage_rows ins join marketplaces m on m.id = ins.marketplace_id and m.rate_policy = 'at_earning' and m.pricing_asset_id = ins.asset_id
        where ins.net > 0)
     select id from usage_rows`,
    await pgColumns(records, [
      (r) => r.id,
      (r) => r.marketplaceId,
      (r) => r.externalId,
      (r) => r.requestHash,
      (r) => r.operatorId,
      (r) => r.customerId,
      (r) => r.resource,
      (r) => r.unit,
      (r) => r.quantity,
      (r) => r.unitPrice,
      (r) => r.assetId,
      (r) => r.gross,
      (r) => r.net,
      (r) => JSON.stringify(r.fees.map((f) => ({ party: f.party, account_id: f.accountId, amount: f.amount.toString() }))),
      (r) => r.feeScheduleVersion,
      (r) => r.periodStart.toISOString(),
      (r) => r.periodEnd.toISOString(),
      (r) => r.effectiveAt.toISOString(),
      (r) => r.holdId,
      (r) => r.transferId,
      (r) => JSON.stringify(r.metadata),
      (r) => r.createdAt.toISOString(),
    ]),
  );
  return rows.length;
}
