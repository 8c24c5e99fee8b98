import type { Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { getAsset } from "../db/queries/assets.js";
import { customerMoneyLeft, lockMarketplaceFundingExclusive } from "../db/queries/funding.js";
import { convertedOutOf, convertibleDeposits, lockDepositConversions, type ConvertibleDepositRow } from "../db/queries/conversion-reports.js";
import { insertConversions, lockConversionPair, postedNets } from "../db/queries/conversions.js";
import { writeTransfers } from "../db/transfer-writer.js";
import type { Asset } from "../domain/assets.js";
import { chart, specKey, type AccountSpec } from "../domain/chart.js";
import { convertAmount, formatRate, revaluationDelta } from "../domain/conversion.js";
import { uuidv7 } from "../domain/ids.js";
import type { LegInput, TransferInput } from "../domain/transfers.js";
import type { Logger } from "../log.js";
import { chooseRate, type ChosenRate, type RateChoice } from "./rates.js";

/** Customer accounts read per page. */
const PAGE = 200;

/** Per customer account, the state (ConvertibleDepositRow.state and the rate) in which it was last found with nothing to convert. */
export type JudgedDeposits = Map<string, string>;

/**
 * Money a customer paid in another asset than its marketplace's pricing currency (an on-chain
 * deposit of a stablecoin, a receipt finance recorded) after that currency was set is converted
 * into it when it has arrived (docs/settlement.md, "Customer funds"), at the rate of the moment,
 * by the same rules as payouts: rounded down for the customer, the remainder left in its balance
 * in the asset paid, the platform's position marked to the rate. Only money received is converted
 * (never a deposit a marketplace merely claimed, nor money that paid the customer's usage), each amount once whatever the number of workers
 * (the amount is judged again under a lock per account, and the conversion's key is what was
 * converted out of the account before it), and it counts as received in the pricing currency for
 * the operators it pays. Without a usable rate the money waits in the asset paid. One customer's
 * failure does not stop the others'.
 */
export async function convertDeposits(
  db: Database,
  settlements: Settlements,
  log: Logger,
  pageSize = PAGE,
  judged: JudgedDeposits = new Map(),
): Promise<number> {
  let converted = 0;
  const now = db.clock.now();
  const rates = new Map<string, RateChoice>();
  for (
    let after: string | undefined, page = await convertibleDeposits(db, { limit: PAGE });
    page.length > 0;
    page = await convertibleDeposits(db, { limit: PAGE, afterAccountId: after })
  ) {
    for (const row of page) {
      try {
        const [from, to] = [(await getAsset(db, row.asset_id))!, (await getAsset(db, row.pricing_asset_id))!];
        const pair = `${from.id}|${to.id}`;
        if (!rates.has(pair)) rates.set(pair, await chooseRate(db, settlements, from, to, now));
        const choice = rates.get(pair)!;
        if (!choice.ok) {
          log.warn(
            { worker: "payouts", marketplace: row.marketplace_id, customer: row.customer_id, reason: choice.reason },
            "customer funds wait to be converted",
          );
        } else {
          // An account found with nothing to convert is judged again only once its balance, the money
          // it received or the rate changed (the judgment reads the marketplace's usage).
          const state = `${row.state}|${choice.chosen.rateId}`;
          if (judged.get(row.account_id) === state) continue;
          if (await convertDeposit(db, row, from, to, choice.chosen)) {
            converted++;
            judged.delete(row.account_id);
          } else judged.set(row.account_id, state);
        }
      } catch (err) {
        log.warn(
          { worker: "payouts", marketplace: row.marketplace_id, customer: row.customer_id, err: err instanceof Error ? err.message : String(err) },
          "converting customer funds failed",
        );
      }
    }
    if (page.length < pageSize) break;
    after = page[page.length - 1]!.account_id;
  }
  return converted;
}

/**
 * Converts what one customer account holds of money received (convertibleDeposits) and not used
 * by its usage (customerMoneyLeft), judged under the marketplace's funding lock and the account's;
 * false when nothing was (left) to convert.
 */
export async function convertDeposit(db: Database, row: ConvertibleDepositRow, from: Asset, to: Asset, chosen: ChosenRate): Promise<boolean> {
  const plan = { amount: 0n, out: 0n, used: 0n, remainder: 0n, revaluation: 0n };
  const [result] = await writeTransfers(
    db,
    async (tx) => {
      // The marketplace's funding lock first, as a payout's judgment takes it: usage being written
      // (which holds it shared) and payouts being judged wait, so the amount judged below counts
      // every record the customer's money has to fund, and no payout relies on the money converted.
      await lockMarketplaceFundingExclusive(tx, row.marketplace_id);
      await lockDepositConversions(tx, row.account_id);
      const account = { id: row.account_id, marketplaceId: row.marketplace_id, customerId: row.customer_id, assetId: row.asset_id };
      const [now] = await convertibleDeposits(tx, { limit: 1, account });
      const left = now ? await customerMoneyLeft(tx, row.marketplace_id, row.customer_id, row.asset_id) : 0n;
      plan.amount = now && left > 0n ? min(BigInt(now.convertible), left) : 0n;
      const { to: out, used, remainder } = convertAmount(plan.amount, from.scale, to.scale, chosen.rate);
      Object.assign(plan, { out, used, remainder });
      if (out === 0n) return [];
      await lockConversionPair(tx, to.id, from.id);
      const before = await convertedOutOf(tx, row.marketplace_id, row.customer_id, from.id);
      return [await conversionTransfer(tx, row, from, to, chosen, plan, `deposit-conversion:${row.account_id}:${before}`)];
    },
    {
      afterWrite: async (tx, [outcome], at) => {
        if (outcome?.kind === "refused") throw outcome.error;
        if (outcome?.kind !== "created") return;
        await recordConversion(tx, { row, from, to, chosen, ...plan, transferId: outcome.transfer.id, at });
      },
    },
  );
  return result !== undefined && result.ok && !result.replayed;
}

/** The conversion's transfer: the customer's money in `from` to the platform, its worth in `to` to the customer, the position marked. */
async function conversionTransfer(
  tx: Queryable,
  row: ConvertibleDepositRow,
  from: Asset,
  to: Asset,
  chosen: ChosenRate,
  plan: { out: bigint; used: bigint; remainder: bigint; revaluation: bigint },
  idempotencyKey: string,
): Promise<TransferInput> {
  const payer: AccountSpec = chart.customer(from.id, row.marketplace_id, row.customer_id, row.billing === "prepaid");
  const payee: AccountSpec = chart.customer(to.id, row.marketplace_id, row.customer_id, row.billing === "prepaid");
  const position = chart.conversion(from.id, to.code);
  const book = chart.conversion(to.id, from.code);
  const gains = chart.fxGainsLosses(to.id);
  const ids = await ensureAccounts(tx, [payer, payee, position, book, gains]);
  const id = (s: AccountSpec) => ids.get(specKey(s))!;
  const nets = await postedNets(tx, [id(position), id(book)]);
  plan.revaluation = revaluationDelta((nets.get(id(position)) ?? 0n) + plan.used, from.scale, (nets.get(id(book)) ?? 0n) - plan.out, to.scale, chosen.rate);
  const legs: LegInput[] = [
    { debitAccountId: id(payer), creditAccountId: id(position), amount: plan.used },
    { debitAccountId: id(book), creditAccountId: id(payee), amount: plan.out },
  ];
  if (plan.revaluation > 0n) legs.push({ debitAccountId: id(gains), creditAccountId: id(book), amount: plan.revaluation });
  if (plan.revaluation < 0n) legs.push({ debitAccountId: id(book), creditAccountId: id(gains), amount: -plan.revaluation });
  const metadata = {
    conversion: {
      customer_id: row.customer_id,
      from: from.code,
      to: to.code,
      used: plan.used.toString(),
      remainder: plan.remainder.toString(),
      to_amount: plan.out.toString(),
    },
    rate: { value: formatRate(chosen.rate), rate_id: chosen.rateId, source: chosen.source, observed_at: chosen.observedAt.toISOString() },
  };
  return { kind: "standard", idempotencyKey, metadata, legs };
}

async function recordConversion(
  tx: Queryable,
  c: {
    row: ConvertibleDepositRow;
    from: Asset;
    to: Asset;
    chosen: ChosenRate;
    amount: bigint;
    used: bigint;
    remainder: bigint;
    out: bigint;
    revaluation: bigint;
    transferId: string;
    at: Date;
  },
): Promise<void> {
  await insertConversions(tx, [
    {
      id: uuidv7(c.at.getTime()),
      transferId: c.transferId,
      kind: "deposit",
      payoutId: null,
      childPayoutId: null,
      operatorId: null,
      marketplaceId: c.row.marketplace_id,
      customerId: c.row.customer_id,
      fromAssetId: c.from.id,
      toAssetId: c.to.id,
      bps: 10_000,
      part: c.amount,
      used: c.used,
      remainder: c.remainder,
      toAmount: c.out,
      rateNum: c.chosen.rate.num,
      rateDen: c.chosen.rate.den,
      rateId: c.chosen.rateId,
      revaluation: c.revaluation,
      convertedAt: c.at,
    },
  ]);
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
