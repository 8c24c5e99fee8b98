import type { Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { getAsset } from "../db/queries/assets.js";
import { insertConversions, lockConversionPair, markPayoutConverted, postedNets, type NewConversion } from "../db/queries/conversions.js";
import { getPayoutAddress, insertPayout, lockPayoutsIn, recordPayoutEvents, setPayoutNote, type Payout } from "../db/queries/payouts.js";
import { writeTransfers, type BatchOutcome } from "../db/transfer-writer.js";
import type { Asset } from "../domain/assets.js";
import { chart, specKey, type AccountSpec } from "../domain/chart.js";
import { formatRate, invertRate, revaluationDelta, splitByBps } from "../domain/conversion.js";
import { LedgerError } from "../domain/errors.js";
import { uuidFromKey, uuidv7 } from "../domain/ids.js";
import type { LegInput, TransferInput } from "../domain/transfers.js";
import { throwIfRefused } from "./fail-payouts.js";
import { routeOf } from "./payouts.js";
import { capsInForce, capsOf, checkPartCaps, lockPartDays, type PartCaps } from "./convert-payout-caps.js";
import { proposePayoutApproval } from "./proposals.js";
import { consumeRateLock, lockCoverage } from "../db/queries/rate-locks.js";
import { dropQueuedPaid, sweepRateLocks } from "./rate-lock-sweep.js";
import { lockOperatorPayoutFunds } from "../db/queries/funding.js";
import { sliceOf, type Slice } from "./conversion-slices.js";
import type { ChosenRate } from "./rates.js";

/**
 * Converts a convert payout (docs/settlement.md, "Conversion on the ledger"), in one transaction:
 *   1. its hold on the operator's payable in the earnings asset P is voided;
 *   2. each part of the split is sliced (src/services/conversion-slices.ts): over the operator's rate
 *      locks of the pair first, each slice at its lock's rate in a transfer of its own, the rest at
 *      the rate of the moment in one transfer for all parts. A slice moves P from the operator's
 *      payable to the platform's conversion account of P against Q (`used`), and Q from the
 *      conversion account of Q against P to the operator's payable in Q (`to`, rounded down); its
 *      `remainder` never leaves the payable. The platform's position in Q is marked to the rate of
 *      the moment (gain or loss booked against `fx:gains_losses` in P);
 *   3. each part is held for a payout of its own (the operator's payable in Q → in transit), which
 *      the worker pays as any other;
 *   4. the payout is marked `converted`, each slice recorded in `conversions` with its rate (and
 *      lock), and the locks used marked consumed.
 * A payout no longer pending (cancelled, converted by another worker) is left alone.
 */
export async function convertPayout(
  db: Database,
  settlements: Settlements,
  { payout, rates, unavailable }: { payout: Payout; rates: Map<string, ChosenRate>; unavailable?: Map<string, string> },
): Promise<{ converted: boolean; children: string[] }> {
  const earnings = (await getAsset(db, payout.assetId))!;
  const plan = await planParts(db, settlements, payout, rates, unavailable ?? new Map());
  const state: State = { converted: false, tags: [] };
  await writeTransfers(db, (tx) => build(tx, db.clock.now(), payout, earnings, plan, state), {
    afterWrite: async (tx, outcomes, bookedAt) => {
      if (!state.converted) return;
      throwIfRefused(outcomes);
      await record(tx, payout, plan, state.tags, outcomes, bookedAt);
    },
  });
  const converted = state.converted;
  return { converted, children: converted ? plan.filter((p) => total(p, "to") > 0n).map((p) => p.childId) : [] };
}

/** What each transfer of the batch is, by place: its outcome's id goes there. */
type Tag = { kind: "void" } | { kind: "convert" } | { kind: "slice"; slice: Slice } | { kind: "hold"; part: Part };
interface State {
  converted: boolean;
  tags: Tag[];
}

/** One part of the split, worked out before the transaction; its slices inside it. */
interface Part {
  asset: Asset;
  bps: number;
  part: bigint;
  rate: ChosenRate | null;
  unavailable: string | null;
  childId: string;
  destination: { settlement: "evm" | "none"; chainId: bigint | null; toAddress: string | null };
  slices: Slice[];
  /** The part's asset's payout caps and approval threshold (its policy and the operator's own caps: the lower applies). */
  caps: PartCaps;
}

const total = (p: Part, k: "to" | "used") => p.slices.reduce((s, x) => s + x[k], 0n);

async function planParts(
  db: Queryable,
  settlements: Settlements,
  payout: Payout,
  rates: Map<string, ChosenRate>,
  unavailable: Map<string, string>,
): Promise<Part[]> {
  const splits = payout.splits!;
  const amounts = splitByBps(
    payout.amount,
    splits.map((s) => s.bps),
  );
  const parts: Part[] = [];
  for (const [i, s] of splits.entries()) {
    const asset = (await getAsset(db, s.asset_id))!;
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
    const rate = rates.get(asset.id) ?? null;
    const caps = asset.id === payout.assetId ? { maxPerPayout: null, maxPerDay: null, approvalThreshold: null } : await capsOf(db, payout.operatorId, asset.id);
    parts.push({ asset, bps: s.bps, part: amounts[i]!, rate, unavailable: unavailable.get(asset.id) ?? null, childId, destination, slices: [], caps });
  }
  return parts;
}

/** Inside the transaction: the payout still pending, its hold voided, the conversions and the parts' holds. */
async function build(tx: Queryable, now: Date, payout: Payout, earnings: Asset, parts: Part[], state: State): Promise<TransferInput[]> {
  state.converted = (await lockPayoutsIn(tx, [payout.id], ["pending"])).length > 0;
  state.tags = [];
  if (!state.converted) return [];
  const converting = parts.filter((p) => p.asset.id !== earnings.id);
  await capsInForce(tx, payout, converting);
  await lockPartDays(tx, payout, converting);
  // The operator's payout lock of the asset before the pair locks (the sweep below takes it): the
  // order is operator, then marketplace funding, then conversion pair everywhere (the rate-lock
  // worker takes the first two, a deposit conversion the last two), so that none of the three waits
  // on another in a circle.
  if (converting.length > 0) await lockOperatorPayoutFunds(tx, payout.operatorId, earnings.id);
  // In one order (by asset id), whatever the order of the splits: two payouts whose splits name the
  // same assets in another order never wait on each other's pair locks in a circle.
  for (const id of [...new Set(converting.map((p) => p.asset.id))].sort()) await lockConversionPair(tx, earnings.id, id);
  // The operator's open locks kept within the earnings they can be used for, before they are used
  // (earnings may have left the payable without a conversion since locks were made).
  if (converting.length > 0) await sweepRateLocks(tx, payout.operatorId, earnings.id);
  await sliceWithinCaps(tx, now, payout, earnings, parts);
  await dropUnlockedPaid(tx, payout, earnings, parts);
  const specs: AccountSpec[] = [chart.operatorPayable(earnings.id, payout.operatorId), chart.fxGainsLosses(earnings.id)];
  for (const p of parts) specs.push(chart.operatorPayable(p.asset.id, payout.operatorId), chart.payoutsInTransit(p.asset.id, routeOf(p.destination)));
  for (const p of converting) specs.push(chart.conversion(earnings.id, p.asset.code), chart.conversion(p.asset.id, earnings.code));
  const ids = await ensureAccounts(tx, specs);
  const id = (s: AccountSpec) => ids.get(specKey(s))!;
  const nets = await postedNets(tx, [...ids.values()]);
  const atNow: LegInput[] = [];
  const locked: { slice: Slice; legs: LegInput[] }[] = [];
  for (const p of converting) {
    const bookSide = chart.conversion(earnings.id, p.asset.code);
    const positionSide = chart.conversion(p.asset.id, earnings.code);
    const legsOf = (x: Slice) => {
      const legs: LegInput[] = [];
      const leg = (debit: AccountSpec, credit: AccountSpec, amount: bigint) => {
        if (amount > 0n) legs.push({ debitAccountId: id(debit), creditAccountId: id(credit), amount });
      };
      leg(chart.operatorPayable(earnings.id, payout.operatorId), bookSide, x.used);
      leg(positionSide, chart.operatorPayable(p.asset.id, payout.operatorId), x.to);
      return { legs, leg };
    };
    for (const x of p.slices.filter((x) => x.lockId !== null)) locked.push({ slice: x, legs: legsOf(x).legs });
    const current = p.slices.find((x) => x.lockId === null);
    if (!current) continue;
    const { legs, leg } = legsOf(current);
    // The position after this part's slices, marked to the rate of the moment (whole P per whole Q).
    const position = (nets.get(id(positionSide)) ?? 0n) - total(p, "to");
    const book = (nets.get(id(bookSide)) ?? 0n) + total(p, "used");
    current.revaluation = revaluationDelta(position, p.asset.scale, book, earnings.scale, invertRate(current.rate!.rate));
    if (current.revaluation > 0n) leg(chart.fxGainsLosses(earnings.id), bookSide, current.revaluation);
    else leg(bookSide, chart.fxGainsLosses(earnings.id), -current.revaluation);
    atNow.push(...legs);
  }
  const transfers: TransferInput[] = [{ kind: "void_pending", pendingId: payout.holdTransferId, idempotencyKey: `payout:${payout.id}:void-for-conversion` }];
  state.tags.push({ kind: "void" });
  if (atNow.length > 0) {
    transfers.push({ kind: "standard", idempotencyKey: `payout:${payout.id}:convert`, metadata: { conversion: metadataOf(payout, parts, null) }, legs: atNow });
    state.tags.push({ kind: "convert" });
  }
  for (const { slice, legs } of locked.filter((l) => l.legs.length > 0)) {
    const metadata = { conversion: metadataOf(payout, parts, slice) };
    transfers.push({ kind: "standard", idempotencyKey: `payout:${payout.id}:convert:${slice.lockId}`, metadata, legs });
    state.tags.push({ kind: "slice", slice });
  }
  for (const p of parts.filter((x) => total(x, "to") > 0n)) {
    transfers.push(holdOf(payout, p, id));
    state.tags.push({ kind: "hold", part: p });
  }
  return transfers;
}

/** Each part sliced (over the operator's rate locks, then at the rate of the moment), then judged by its asset's caps. */
async function sliceWithinCaps(tx: Queryable, now: Date, payout: Payout, earnings: Asset, parts: Part[]): Promise<void> {
  for (const p of parts) p.slices = await sliceOf(tx, payout.operatorId, earnings, p.asset, p.part, { rate: p.rate, unavailable: p.unavailable });
  const converting = parts.filter((p) => p.asset.id !== earnings.id);
  await checkPartCaps(
    tx,
    now,
    payout,
    converting.map((p) => ({ ...p, amount: total(p, "to") })),
  );
}

/**
 * The earnings the locks used stand for (a lock of a 50% share used for 10 stands for 20 of
 * earnings, the other 10 paid in the part of another asset); the rest of the payout pays
 * never-locked earnings, and the queued records it pays are not locked afterwards.
 */
async function dropUnlockedPaid(tx: Queryable, payout: Payout, earnings: Asset, parts: Part[]): Promise<void> {
  const used = parts.flatMap((p) => p.slices.filter((x) => x.lockId !== null).map((x) => ({ x, bps: p.bps })));
  const coverage = await lockCoverage(
    tx,
    used.map(({ x }) => x.lockId!),
  );
  // A lock made before its records were kept (no pass total) stands for its part at the payout's share of its asset.
  const stands = used.reduce((t, { x, bps }) => {
    const c = coverage.get(x.lockId!)!;
    return t + (c.passTotal === null ? (x.part * 10_000n) / BigInt(bps) : (x.part * c.passTotal) / c.amount);
  }, 0n);
  await dropQueuedPaid(tx, payout.operatorId, earnings.id, payout.amount - stands);
}

/** A part's own payout's hold: the operator's payable in its asset → in transit. */
function holdOf(payout: Payout, p: Part, id: (s: AccountSpec) => string): TransferInput {
  return {
    kind: "pending",
    idempotencyKey: `payout:${p.childId}:hold`,
    metadata: { payout: { id: p.childId, operator_id: payout.operatorId, parent_payout_id: payout.id } },
    legs: [
      {
        debitAccountId: id(chart.operatorPayable(p.asset.id, payout.operatorId)),
        creditAccountId: id(chart.payoutsInTransit(p.asset.id, routeOf(p.destination))),
        amount: total(p, "to"),
      },
    ],
  };
}

/** A conversion transfer's metadata: the slices at the rate of the moment (`only` null), or one locked slice, with rate, source and instant. */
function metadataOf(payout: Payout, parts: Part[], only: Slice | null) {
  const rows = parts.flatMap((p) => p.slices.filter((x) => (only === null ? x.lockId === null : x === only)).map((x) => ({ p, x })));
  return {
    payout_id: payout.id,
    parts: rows.map(({ p, x }) => ({
      asset: p.asset.code,
      bps: p.bps,
      part: x.part.toString(),
      used: x.used.toString(),
      remainder: x.remainder.toString(),
      to: x.to.toString(),
      rate: x.rate ? formatRate(x.rate.rate) : "1",
      rate_id: x.rate?.rateId ?? null,
      rate_lock_id: x.lockId,
      source: x.rate?.source ?? null,
      observed_at: x.rate?.observedAt.toISOString() ?? null,
    })),
  };
}

/** After the ledger wrote: the parts' payouts, the payout converted, the conversions recorded, the locks used. */
async function record(tx: Queryable, payout: Payout, parts: Part[], tags: Tag[], outcomes: BatchOutcome[], at: Date): Promise<void> {
  const idOf = (o: BatchOutcome | undefined) => (o?.kind === "created" ? o.transfer.id : o?.kind === "replayed" ? o.id : null);
  const ids = new Map<Tag, string | null>(tags.map((t, k) => [t, idOf(outcomes[k])]));
  const convertId = [...ids].find(([t]) => t.kind === "convert")?.[1] ?? null;
  const sliceIds = new Map([...ids].flatMap(([t, v]) => (t.kind === "slice" ? [[t.slice, v] as const] : [])));
  const holdIds = new Map([...ids].flatMap(([t, v]) => (t.kind === "hold" ? [[t.part, v] as const] : [])));
  const rows: NewConversion[] = [];
  for (const p of parts) {
    const holdId = holdIds.get(p) ?? null;
    if (holdId !== null) {
      const amount = total(p, "to");
      // Above its asset's approval threshold, a part waits for a second key as a payout asked for in that asset does.
      const needsApproval = p.caps.approvalThreshold !== null && amount > p.caps.approvalThreshold;
      await insertPayout(tx, {
        id: p.childId,
        operatorId: payout.operatorId,
        assetId: p.asset.id,
        ...p.destination,
        amount,
        trigger: payout.trigger,
        requestedBy: payout.requestedBy,
        holdTransferId: holdId,
        createdAt: at,
        approval: needsApproval ? "required" : null,
        parentPayoutId: payout.id,
      });
      await recordPayoutEvents(tx, [p.childId], "pending", at, { parent_payout_id: payout.id });
      if (needsApproval) {
        const proposal = await proposePayoutApproval(tx, {
          now: at,
          by: payout.requestedBy,
          payoutId: p.childId,
          operatorId: payout.operatorId,
          asset: p.asset.code,
          amount,
          destination: p.destination,
        });
        await setPayoutNote(
          tx,
          p.childId,
          `awaiting approval: above the payout policy's approval threshold of ${p.caps.approvalThreshold} ${p.asset.code} (proposal ${proposal.id})`,
        );
      }
    }
    for (const x of p.slices) {
      if (x.lockId !== null) await consumeRateLock(tx, x.lockId, x.part);
      const transferId = x.lockId !== null ? sliceIds.get(x) : x.rate !== null ? convertId : payout.holdTransferId;
      rows.push(conversionRow(payout, p, x, transferId ?? payout.holdTransferId, holdId === null ? null : p.childId, at));
    }
  }
  await insertConversions(tx, rows);
  const settledBy = convertId ?? [...sliceIds.values()].find((v) => v !== null) ?? payout.holdTransferId;
  await markPayoutConverted(tx, payout.id, settledBy, at);
  await recordPayoutEvents(tx, [payout.id], "converted", at, { conversion_transfer_id: convertId ?? (settledBy === payout.holdTransferId ? null : settledBy) });
}

function conversionRow(payout: Payout, p: Part, x: Slice, transferId: string, childPayoutId: string | null, at: Date): NewConversion {
  const rate = x.rate?.rate ?? { num: 1n, den: 1n };
  return {
    id: uuidv7(at.getTime()),
    transferId,
    kind: "payout",
    marketplaceId: null,
    customerId: null,
    payoutId: payout.id,
    childPayoutId,
    operatorId: payout.operatorId,
    fromAssetId: payout.assetId,
    toAssetId: p.asset.id,
    bps: p.bps,
    part: x.part,
    used: x.used,
    remainder: x.remainder,
    toAmount: x.to,
    rateNum: rate.num,
    rateDen: rate.den,
    rateId: x.rate?.rateId ?? null,
    rateLockId: x.lockId,
    revaluation: x.revaluation,
    convertedAt: at,
  };
}
