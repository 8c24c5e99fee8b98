import type { Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { getAsset } from "../db/queries/assets.js";
import { insertConversions, lockConversionPair, markPayoutConverted, postedNets, type NewConversion } from "../db/queries/conversions.js";
import { getPayoutAddress, insertPayout, lockPayoutsIn, recordPayoutEvents, type Payout } from "../db/queries/payouts.js";
import { writeTransfers, type BatchOutcome } from "../db/transfer-writer.js";
import type { Asset } from "../domain/assets.js";
import { chart, specKey, type AccountSpec } from "../domain/chart.js";
import { convertAmount, formatRate, invertRate, revaluationDelta, splitByBps } from "../domain/conversion.js";
import { LedgerError } from "../domain/errors.js";
import { uuidFromKey, uuidv7 } from "../domain/ids.js";
import type { LegInput, TransferInput } from "../domain/transfers.js";
import { throwIfRefused } from "./fail-payouts.js";
import { routeOf } from "./payouts.js";
import type { ChosenRate } from "./rates.js";

/**
 * Converts a convert payout (docs/settlement.md, "Conversion on the ledger"), in one transaction:
 *   1. its hold on the operator's payable in the earnings asset P is voided;
 *   2. one transfer converts each part of the split: P from the operator's payable to the platform's
 *      conversion account of P against Q (`used`), Q from the conversion account of Q against P to
 *      the operator's payable in Q (`to`, rounded down); the part's `remainder` never leaves the
 *      payable; the platform's position in Q is marked to the rate (gain or loss booked against
 *      `fx:gains_losses` in P);
 *   3. each part is held for a payout of its own (the operator's payable in Q → in transit), which
 *      the worker pays as any other;
 *   4. the payout is marked `converted`, and each part recorded in `conversions` with its rate.
 * A payout no longer pending (cancelled, converted by another worker) is left alone.
 */
export async function convertPayout(
  db: Database,
  settlements: Settlements,
  { payout, rates }: { payout: Payout; rates: Map<string, ChosenRate> },
): Promise<{ converted: boolean; children: string[] }> {
  const earnings = (await getAsset(db, payout.assetId))!;
  const plan = await planParts(db, settlements, payout, earnings, rates);
  const state = { converted: false, withConversion: false };
  await writeTransfers(db, (tx) => build(tx, payout, earnings, plan, state), {
    afterWrite: async (tx, outcomes, bookedAt) => {
      if (!state.converted) return;
      throwIfRefused(outcomes);
      await record(tx, payout, plan, state.withConversion, outcomes, bookedAt);
    },
  });
  const converted = state.converted;
  return { converted, children: converted ? plan.filter((p) => p.to > 0n).map((p) => p.childId) : [] };
}

/** One part of the split, worked out before the transaction. */
interface Part {
  asset: Asset;
  bps: number;
  part: bigint;
  to: bigint;
  used: bigint;
  remainder: bigint;
  rate: ChosenRate | null;
  childId: string;
  destination: { settlement: "evm" | "none"; chainId: bigint | null; toAddress: string | null };
  revaluation: bigint;
}

async function planParts(db: Queryable, settlements: Settlements, payout: Payout, earnings: Asset, rates: Map<string, ChosenRate>): Promise<Part[]> {
  const splits = payout.splits!;
  const amounts = splitByBps(
    payout.amount,
    splits.map((s) => s.bps),
  );
  const parts: Part[] = [];
  for (const [i, s] of splits.entries()) {
    const asset = (await getAsset(db, s.asset_id))!;
    const identity = asset.id === earnings.id;
    const rate = identity ? null : rates.get(asset.id);
    if (!identity && !rate) throw new Error(`no rate chosen for ${earnings.code}→${asset.code}`);
    const { to, used, remainder } = identity
      ? { to: amounts[i]!, used: amounts[i]!, remainder: 0n }
      : convertAmount(amounts[i]!, earnings.scale, asset.scale, rate!.rate);
    const route = settlements.forAsset(asset);
    if (route.kind === "unconfigured") throw new LedgerError("chain_not_configured", route.reason ?? `asset ${asset.code} is not paid out by this service`);
    let destination: Part["destination"] = { settlement: "none", chainId: null, toAddress: null };
    if (route.kind === "evm") {
      const address = await getPayoutAddress(db, payout.operatorId, route.chain.chainId);
      if (address === undefined)
        throw new LedgerError("payout_address_missing", `operator ${payout.operatorId} has no verified payout address on chain ${route.chain.chainId}`);
      destination = { settlement: "evm", chainId: route.chain.chainId, toAddress: address };
    }
    const childId = uuidFromKey(`payout-part:${payout.id}:${asset.id}`);
    parts.push({ asset, bps: s.bps, part: amounts[i]!, to, used, remainder, rate: rate ?? null, childId, destination, revaluation: 0n });
  }
  return parts;
}

/** Inside the transaction: the payout still pending, its hold voided, the conversion and the parts' holds. */
async function build(
  tx: Queryable,
  payout: Payout,
  earnings: Asset,
  parts: Part[],
  state: { converted: boolean; withConversion: boolean },
): Promise<TransferInput[]> {
  state.converted = (await lockPayoutsIn(tx, [payout.id], ["pending"])).length > 0;
  if (!state.converted) return [];
  const converting = parts.filter((p) => p.rate !== null);
  for (const p of converting) await lockConversionPair(tx, earnings.id, p.asset.id);
  const specs: AccountSpec[] = [chart.operatorPayable(earnings.id, payout.operatorId), chart.fxGainsLosses(earnings.id)];
  for (const p of parts) specs.push(chart.operatorPayable(p.asset.id, payout.operatorId), chart.payoutsInTransit(p.asset.id, routeOf(p.destination)));
  for (const p of converting) specs.push(chart.conversion(earnings.id, p.asset.code), chart.conversion(p.asset.id, earnings.code));
  const ids = await ensureAccounts(tx, specs);
  const id = (s: AccountSpec) => ids.get(specKey(s))!;
  const nets = await postedNets(tx, [...ids.values()]);
  const legs: LegInput[] = [];
  const leg = (debit: AccountSpec, credit: AccountSpec, amount: bigint) => {
    if (amount > 0n) legs.push({ debitAccountId: id(debit), creditAccountId: id(credit), amount });
  };
  for (const p of converting) {
    const bookSide = chart.conversion(earnings.id, p.asset.code);
    const positionSide = chart.conversion(p.asset.id, earnings.code);
    leg(chart.operatorPayable(earnings.id, payout.operatorId), bookSide, p.used);
    leg(positionSide, chart.operatorPayable(p.asset.id, payout.operatorId), p.to);
    // The position after this conversion, marked to its rate (whole P per whole Q).
    const position = (nets.get(id(positionSide)) ?? 0n) - p.to;
    const book = (nets.get(id(bookSide)) ?? 0n) + p.used;
    p.revaluation = revaluationDelta(position, p.asset.scale, book, earnings.scale, invertRate(p.rate!.rate));
    if (p.revaluation > 0n) leg(chart.fxGainsLosses(earnings.id), bookSide, p.revaluation);
    else leg(bookSide, chart.fxGainsLosses(earnings.id), -p.revaluation);
  }
  const transfers: TransferInput[] = [{ kind: "void_pending", pendingId: payout.holdTransferId, idempotencyKey: `payout:${payout.id}:void-for-conversion` }];
  state.withConversion = legs.length > 0;
  if (state.withConversion)
    transfers.push({ kind: "standard", idempotencyKey: `payout:${payout.id}:convert`, metadata: { conversion: metadataOf(payout, parts) }, legs });
  for (const p of parts.filter((x) => x.to > 0n)) {
    transfers.push({
      kind: "pending",
      idempotencyKey: `payout:${p.childId}:hold`,
      metadata: { payout: { id: p.childId, operator_id: payout.operatorId, parent_payout_id: payout.id } },
      legs: [
        {
          debitAccountId: id(chart.operatorPayable(p.asset.id, payout.operatorId)),
          creditAccountId: id(chart.payoutsInTransit(p.asset.id, routeOf(p.destination))),
          amount: p.to,
        },
      ],
    });
  }
  return transfers;
}

/** The conversion transfer's metadata: each part with its rate, source and instant. */
function metadataOf(payout: Payout, parts: Part[]) {
  return {
    payout_id: payout.id,
    parts: parts.map((p) => ({
      asset: p.asset.code,
      bps: p.bps,
      part: p.part.toString(),
      used: p.used.toString(),
      remainder: p.remainder.toString(),
      to: p.to.toString(),
      rate: p.rate ? formatRate(p.rate.rate) : "1",
      rate_id: p.rate?.rateId ?? null,
      source: p.rate?.source ?? null,
      observed_at: p.rate?.observedAt.toISOString() ?? null,
    })),
  };
}

/** After the ledger wrote: the parts' payouts, the payout converted, the conversions recorded. */
async function record(tx: Queryable, payout: Payout, parts: Part[], hasConversion: boolean, outcomes: BatchOutcome[], at: Date): Promise<void> {
  const idOf = (o: BatchOutcome | undefined) => (o?.kind === "created" ? o.transfer.id : o?.kind === "replayed" ? o.id : null);
  const conversionTransferId = hasConversion ? idOf(outcomes[1]) : null;
  let next = hasConversion ? 2 : 1;
  const rows: NewConversion[] = [];
  for (const p of parts) {
    const holdId = p.to > 0n ? idOf(outcomes[next++]) : null;
    if (holdId !== null) {
      await insertPayout(tx, {
        id: p.childId,
        operatorId: payout.operatorId,
        assetId: p.asset.id,
        ...p.destination,
        amount: p.to,
        trigger: payout.trigger,
        requestedBy: payout.requestedBy,
        holdTransferId: holdId,
        createdAt: at,
        approval: null,
        parentPayoutId: payout.id,
      });
      await recordPayoutEvents(tx, [p.childId], "pending", at, { parent_payout_id: payout.id });
    }
    const rate = p.rate?.rate ?? { num: 1n, den: 1n };
    rows.push({
      id: uuidv7(at.getTime()),
      transferId: conversionTransferId ?? payout.holdTransferId,
      kind: "payout",
      marketplaceId: null,
      customerId: null,
      payoutId: payout.id,
      childPayoutId: holdId === null ? null : p.childId,
      operatorId: payout.operatorId,
      fromAssetId: payout.assetId,
      toAssetId: p.asset.id,
      bps: p.bps,
      part: p.part,
      used: p.used,
      remainder: p.remainder,
      toAmount: p.to,
      rateNum: rate.num,
      rateDen: rate.den,
      rateId: p.rate?.rateId ?? null,
      revaluation: p.revaluation,
      convertedAt: at,
    });
  }
  await insertConversions(tx, rows);
  await markPayoutConverted(tx, payout.id, conversionTransferId ?? payout.holdTransferId, at);
  await recordPayoutEvents(tx, [payout.id], "converted", at, { conversion_transfer_id: conversionTransferId });
}
