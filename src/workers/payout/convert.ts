import { getAsset } from "../../db/queries/assets.js";
import { listConvertiblePayouts } from "../../db/queries/conversions.js";
import { getPayout, setPayoutNote } from "../../db/queries/payouts.js";
import { owedByOperator } from "../../db/queries/receivables.js";
import { LedgerError } from "../../domain/errors.js";
import { unitsToDecimal } from "../../domain/money.js";
import { convertPayout } from "../../services/convert-payout.js";
import { chooseRate, type ChosenRate } from "../../services/rates.js";
import { errorSummary, type PayoutContext } from "./context.js";

/** Convert payouts taken per tick. */
const CONVERT_BATCH = 50;

/**
 * Converts pending convert payouts (docs/settlement.md) at the rate of the moment: each part's rate
 * is chosen (src/services/rates.ts) and the conversion booked with the parts' own payouts, which the
 * chain steps then pay. Earnings the operator's rate locks cover are converted at the locks' rates
 * (docs/settlement.md, "Rate policy"). A payout whose rate cannot be used (stale, sources apart, a
 * feed that reverts) for what locks do not cover, or whose part cannot be paid, waits, with the
 * reason in its `note`; nothing is converted at a rate that failed a check.
 */
export async function convertPending(ctx: PayoutContext): Promise<number> {
  let converted = 0;
  for (const id of await listConvertiblePayouts(ctx.db, CONVERT_BATCH)) {
    const payout = await getPayout(ctx.db, id);
    if (!payout || payout.status !== "pending") continue;
    const earnings = (await getAsset(ctx.db, payout.assetId))!;
    let waiting: string | null = null;
    // An operator that came to owe the platform (a clawback) is paid nothing while it owes: the
    // payout waits unconverted, so that cancelling it returns the earnings that pay the debt back.
    const owed = await owedByOperator(ctx.db, payout.operatorId);
    if (owed.length > 0) {
      waiting = `operator ${payout.operatorId} owes ${owed.map((o) => `${unitsToDecimal(BigInt(o.owed), o.scale)} ${o.code}`).join(" and ")} to the platform (a clawback); nothing is paid while it owes — cancel the payout to let its amount pay the debt back`;
    } else
      try {
        // A pair without a usable rate now may still be covered by the operator's rate locks: the conversion decides.
        const rates = new Map<string, ChosenRate>();
        const unavailable = new Map<string, string>();
        for (const split of payout.splits ?? []) {
          if (split.asset_id === earnings.id) continue;
          const choice = await chooseRate(ctx.db, ctx.settlements, earnings, (await getAsset(ctx.db, split.asset_id))!, ctx.now());
          if (choice.ok) rates.set(split.asset_id, choice.chosen);
          else unavailable.set(split.asset_id, choice.reason);
        }
        if ((await convertPayout(ctx.db, ctx.settlements, { payout, rates, unavailable })).converted) converted++;
      } catch (err) {
        // One payout's failure (a refusal, a feed's transport error) leaves the others to convert.
        waiting = err instanceof LedgerError ? err.message : `the conversion failed (${errorSummary(err)}); retrying`;
      }
    if (waiting !== null && payout.note !== `waiting to convert: ${waiting}`) {
      await setPayoutNote(ctx.db, payout.id, `waiting to convert: ${waiting}`);
      ctx.log.warn({ worker: "payouts", payout: payout.id, reason: waiting }, "payout waits to be converted");
    }
  }
  return converted;
}
