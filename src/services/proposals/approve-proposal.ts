import type { Database, Queryable } from "../../db/client.js";
import { ensureAccounts } from "../../db/ensure-accounts.js";
import { getAsset } from "../../db/queries/assets.js";
import { insertFundsReceipt, lockMarketplaceFundingExclusive, upsertMarketplaceCreditLimit } from "../../db/queries/funding.js";
import { lockCustomerOwes, setCustomerCreditLimit, upsertOperatorPayoutLimits } from "../../db/queries/parties.js";
import { lockPayoutLimits } from "../../db/queries/payout-policies.js";
import { recordPayoutEvents } from "../../db/queries/payouts.js";
import { approvePayoutAwaitingApproval } from "../../db/queries/proposals.js";
import { writeTransfers } from "../../db/transfer-writer.js";
import { chart, specKey } from "../../domain/chart.js";
import { LedgerError } from "../../domain/errors.js";
import { uuidv7 } from "../../domain/ids.js";
import { unitsToDecimal } from "../../domain/money.js";
import type { ProposalKind } from "../../domain/proposals.js";
import { paidBeyondFunds } from "../funding.js";
import { getCustomer } from "../marketplaces.js";
import { applyPayoutAddressProposal } from "../payout-addresses.js";
import { setPayoutPolicy } from "../payout-policies.js";
import { resolveItem } from "../reconcile.js";
import { inTransaction } from "../transaction.js";
import { setUsageLimits } from "../usage-limits.js";
import { decide, type Decider, independent, mayDecide } from "./decision.js";
import { applyAssetSettlement } from "./propose-asset-settlement.js";
import { applyRate } from "./propose-rate.js";
import { applyRateBounds } from "./propose-rate-bounds.js";
import { applyPeriodChange } from "../periods.js";
import { checkCustomerLimit } from "./propose-customer-credit-limit.js";
import { getProposal, type Proposal } from "./proposal.js";
import { approveUsageReversal } from "./propose-usage-reversal.js";

/** Approves a proposal and carries it out, in one transaction: if carrying it out is refused, it stays proposed. */
export async function approveProposal(db: Database, { id, by, reason }: { id: string; by: Decider; reason: string | null }): Promise<Proposal> {
  const p = await getProposal(db, id);
  if (!p) throw new LedgerError("proposal_not_found", `proposal ${id} does not exist`);
  mayDecide(p, by);
  await independent(db, p, by);
  return carryOut[p.kind](db, p, by, reason);
}

type CarryOut = (db: Database, p: Proposal, by: Decider, reason: string | null) => Promise<Proposal>;

/** What approving each kind of proposal does. */
const carryOut: Record<ProposalKind, CarryOut> = {
  receipt: approveReceipt,
  reconciliation_adjustment: approveAdjustment,
  asset_settlement: (db, p, by, reason) => inDecision(db, p, by, reason, (tx, at) => applyAssetSettlement(tx, p, by, at)),
  rate: (db, p, by, reason) => inDecision(db, p, by, reason, (tx, at) => applyRate(tx, p, at)),
  rate_bounds: (db, p, by, reason) => inDecision(db, p, by, reason, (tx) => applyRateBounds(tx, p)),
  period_close: (db, p, by, reason) => inDecision(db, p, by, reason, (tx, at) => applyPeriodChange(tx, p, at)),
  period_reopen: (db, p, by, reason) => inDecision(db, p, by, reason, (tx, at) => applyPeriodChange(tx, p, at)),
  payout_address: (db, p, by, reason) => inDecision(db, p, by, reason, (tx, at) => applyPayoutAddressProposal(tx, p, at)),
  usage_reversal: approveUsageReversal,
  usage_limits: (db, p, by, reason) =>
    inDecision(db, p, by, reason, async (tx, at) => {
      const q = p.payload;
      const limits = await setUsageLimits(tx, at, {
        marketplaceId: p.marketplaceId!,
        asset: String(q.asset),
        updatedBy: p.proposedBy,
        maxGrossPerRecord: q.max_gross_per_record === undefined ? undefined : q.max_gross_per_record === null ? null : BigInt(String(q.max_gross_per_record)),
        maxQuantityPerSecond: q.max_quantity_per_second as Record<string, string | null> | undefined,
      });
      return { max_gross_per_record: limits.maxGrossPerRecord.toString(), max_quantity_per_second: limits.maxQuantityPerSecond };
    }),
  payout: (db, p, by, reason) =>
    inDecision(db, p, by, reason, async (tx, at) => {
      const payoutId = String(p.payload.payout_id);
      if (!(await approvePayoutAwaitingApproval(tx, payoutId, at)))
        throw new LedgerError("payout_not_pending", `payout ${payoutId} is no longer waiting for approval (cancelled or failed)`);
      await recordPayoutEvents(tx, [payoutId], "pending", at, { approved_by: by.keyId });
      return { payout_id: payoutId };
    }),
  operator_payout_limits: (db, p, by, reason) =>
    inDecision(db, p, by, reason, async (tx, at) => {
      const q = p.payload;
      // Waits for the payout requests being judged under the limits before (lockPayoutLimits).
      await lockPayoutLimits(tx, q.asset_id as string, "exclusive");
      await upsertOperatorPayoutLimits(tx, {
        operatorId: q.operator_id as string,
        assetId: q.asset_id as string,
        maxPerPayout: q.max_per_payout as string | null,
        maxPerDay: q.max_per_day as string | null,
        proposalId: p.id,
        updatedAt: at,
      });
      return { max_per_payout: q.max_per_payout ?? null, max_per_day: q.max_per_day ?? null };
    }),
  payout_policy: (db, p, by, reason) =>
    inDecision(db, p, by, reason, async (tx, at) => {
      const q = p.payload as Record<string, string | number | null>;
      const big = (v: string | number | null | undefined) => (v == null ? null : BigInt(v));
      const policy = await setPayoutPolicy(tx, {
        asset: String(q.asset),
        minAmount: BigInt(String(q.min_amount)),
        schedule: q.schedule as "manual" | "interval",
        intervalSeconds: q.interval_seconds === null ? undefined : Number(q.interval_seconds),
        maxGasShareBps: q.max_gas_share_bps === null ? null : Number(q.max_gas_share_bps),
        maxPerPayout: big(q.max_per_payout),
        maxPerDay: big(q.max_per_day),
        approvalThreshold: big(q.approval_threshold),
        updatedBy: p.proposedBy,
        now: at,
      });
      return { asset: policy.assetCode, updated_at: at.toISOString() };
    }),
  customer_credit_limit: (db, p, by, reason) =>
    inDecision(db, p, by, reason, async (tx) => {
      const asset = (await getAsset(tx, String(p.payload.asset_id)))!;
      const customerId = String(p.payload.customer_id);
      const limit = BigInt(String(p.payload.credit_limit));
      // Under the balance row's lock: usage written meanwhile is counted, and usage after it sees the new limit.
      let accountId = await checkCustomerLimit(tx, p.marketplaceId!, customerId, asset, limit);
      if (accountId === undefined) {
        const spec = chart.customer(asset.id, p.marketplaceId!, customerId, false);
        accountId = (await ensureAccounts(tx, [{ ...spec, overdraftLimit: limit }])).get(specKey(spec))!;
        await lockCustomerOwes(tx, accountId);
      }
      await setCustomerCreditLimit(tx, accountId, limit);
      return { credit_limit: limit.toString(), account_id: accountId };
    }),
  credit_limit: (db, p, by, reason) =>
    inDecision(db, p, by, reason, async (tx, at) => {
      const limit = String(p.payload.credit_limit);
      // With the marketplace's funding lock held exclusively (no usage written, no payout judged
      // meanwhile): a lower limit may not take back credit that operators were already paid from.
      await lockMarketplaceFundingExclusive(tx, p.marketplaceId!);
      await upsertMarketplaceCreditLimit(tx, {
        marketplaceId: p.marketplaceId!,
        assetId: p.payload.asset_id as string,
        creditLimit: limit,
        proposalId: p.id,
        updatedAt: at,
      });
      const paidBeyond = await paidBeyondFunds(tx, { marketplaceId: p.marketplaceId!, assetId: String(p.payload.asset_id) });
      if (paidBeyond.length > 0) {
        const asset = (await getAsset(tx, String(p.payload.asset_id)))!;
        throw new LedgerError(
          "credit_limit_in_use",
          `a credit limit of ${unitsToDecimal(BigInt(limit), asset.scale)} ${asset.code} would take back credit that was paid out: ` +
            `${paidBeyond.map((o) => `operator ${o.operatorId} was paid ${unitsToDecimal(o.awaiting - o.available, asset.scale)} ${asset.code} beyond its funded earnings`).join("; ")}; ` +
            "lower it once the marketplace has settled that much",
        );
      }
      return { credit_limit: limit };
    }),
};

/**
 * Carries out a change and records the decision in one transaction, with the proposal's row
 * locked and checked again (decided once, by a key that may), at one instant of the clock.
 */
async function inDecision(
  db: Database,
  p: Proposal,
  by: Decider,
  reason: string | null,
  change: (tx: Queryable, at: Date) => Promise<Record<string, unknown>>,
): Promise<Proposal> {
  return inTransaction(db, async (tx) => {
    mayDecide((await getProposal(tx, p.id, true))!, by);
    const at = db.clock.now();
    return decide(tx, p.id, "approved", by, at, reason, await change(tx, at));
  });
}

/** A reconciliation adjustment: the item is resolved with its adjusting transfer, the decision in the same transaction. */
async function approveAdjustment(db: Database, p: Proposal, by: Decider, reason: string | null): Promise<Proposal> {
  const a = p.payload.adjustment as { debit_account_id: string; credit_account_id: string; amount: string };
  let decided: Proposal | undefined;
  await resolveItem(db, {
    runId: String(p.payload.reconciliation_id),
    itemId: BigInt(String(p.payload.item_id)),
    note: String(p.payload.note),
    resolvedBy: p.proposedBy,
    approvedBy: by.keyId,
    adjustment: { debitAccountId: a.debit_account_id, creditAccountId: a.credit_account_id, amount: BigInt(a.amount) },
    alsoInTx: async (tx, bookedAt, transferId) => {
      mayDecide((await getProposal(tx, p.id, true))!, by);
      decided = await decide(tx, p.id, "approved", by, bookedAt, reason, { transfer_id: transferId });
    },
  });
  return decided!;
}

/**
 * Records the money: treasury → the customer's account (money paid for a customer) or → the
 * marketplace's deposit clearing (its settlement of deposits it claimed), and the receipt row.
 */
async function approveReceipt(db: Database, p: Proposal, by: Decider, reason: string | null): Promise<Proposal> {
  const asset = (await getAsset(db, String(p.payload.asset_id)))!;
  const marketplaceId = p.marketplaceId!;
  const customerId = p.payload.customer_id === null ? null : String(p.payload.customer_id);
  const customer = customerId === null ? undefined : await getCustomer(db, marketplaceId, customerId);
  const route = asset.settlement.kind === "offchain" ? "offchain" : String(asset.settlement.chainId);
  const treasury = chart.treasury(asset.id, route);
  const to = customer ? chart.customer(asset.id, marketplaceId, customer.id, customer.billing === "prepaid") : chart.depositClearing(asset.id, marketplaceId);
  const amount = BigInt(String(p.payload.amount));
  let decided: Proposal | undefined;
  const [result] = await writeTransfers(
    db,
    async (tx) => {
      const locked = (await getProposal(tx, p.id, true))!;
      mayDecide(locked, by);
      const ids = await ensureAccounts(tx, [treasury, to]);
      return [
        {
          kind: "standard",
          idempotencyKey: `receipt:${p.id}`,
          metadata: { receipt: { proposal_id: p.id, marketplace_id: marketplaceId, customer_id: customerId, reference: p.payload.reference } },
          legs: [{ debitAccountId: ids.get(specKey(treasury))!, creditAccountId: ids.get(specKey(to))!, amount }],
        },
      ];
    },
    {
      afterWrite: async (tx, [outcome], bookedAt) => {
        if (outcome?.kind === "refused") throw outcome.error;
        if (outcome?.kind !== "created") throw new LedgerError("proposal_decided", `proposal ${p.id} was carried out already`);
        await insertFundsReceipt(tx, {
          id: uuidv7(),
          marketplaceId,
          customerId,
          assetId: asset.id,
          amount,
          reference: String(p.payload.reference),
          referenceKey: String(p.payload.reference_key),
          transferId: outcome.transfer.id,
          proposalId: p.id,
          receivedAt: bookedAt,
        });
        decided = await decide(tx, p.id, "approved", by, bookedAt, reason, { transfer_id: outcome.transfer.id });
      },
    },
  );
  if (!result!.ok) throw result!.error;
  return decided!;
}
