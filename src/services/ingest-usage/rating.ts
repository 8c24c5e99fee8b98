import type { MarketplaceFacts } from "../../db/queries/usage.js";
import { assetRetired } from "../../domain/assets.js";
import { chart } from "../../domain/chart.js";
import { FUTURE_TOLERANCE_MS } from "../../domain/clock.js";
import { customerRetired } from "../../domain/customers.js";
import { LedgerError } from "../../domain/errors.js";
import { bookedEffective } from "../../domain/period-rules.js";
import { uuidv7 } from "../../domain/ids.js";
import { parseUnits } from "../../domain/money.js";
import { grossFromPrice, parseDecimal, resolveRule, splitGross } from "../../domain/rating.js";
import { checkUsageLimits } from "../../domain/usage-limits.js";
import { limitsOf } from "../usage-limits.js";
import type { Planned, UsageInput, UsageItem } from "./types.js";

/** How far in the future a record's period may end (clock skew between marketplace and ledger). */
export { FUTURE_TOLERANCE_MS };

/** Rates one record and checks it against the marketplace's facts. Throws LedgerError when it is refused. */
export function planRecord(index: number, item: UsageItem, hash: string, facts: MarketplaceFacts, now: number): Planned {
  const { marketplaceId: m, input } = item;
  const asset = facts.assets.get(input.asset);
  if (!asset) throw new LedgerError("asset_not_found", `asset ${input.asset} does not exist`, [{ path: "asset", message: "does not exist" }]);
  if (asset.retiredAt !== null) throw assetRetired(input.asset, asset.retiredAt);
  refuseOtherThanPricing(facts.pricing.get(m), m, input.asset);
  const billing = facts.customers.get(`${m}|${input.customerId}`);
  if (!billing)
    throw new LedgerError("customer_not_found", `customer ${input.customerId} does not exist in marketplace ${m}`, [
      { path: "customerId", message: "does not exist" },
    ]);
  const retired = facts.retiredCustomers.get(`${m}|${input.customerId}`);
  if (retired) throw customerRetired(m, input.customerId, retired);
  if (!facts.operators.has(`${m}|${input.operatorId}`)) {
    throw new LedgerError("operator_not_found", `operator ${input.operatorId} is not registered with marketplace ${m}`, [
      { path: "operatorId", message: "is not registered" },
    ]);
  }
  if (input.periodStart.getTime() > input.periodEnd.getTime()) {
    throw new LedgerError("invalid_request", "the period must start before it ends", [{ path: "periodStart", message: "is after periodEnd" }]);
  }
  if (input.periodEnd.getTime() > now + FUTURE_TOLERANCE_MS) {
    throw new LedgerError("usage_in_future", `the period ends at ${input.periodEnd.toISOString()}, more than 5 minutes from now`);
  }
  // A record of a closed period is booked in the first open one; of a period being closed, refused.
  const booking = bookedEffective(m, facts.periods.get(m) ?? [], input.periodEnd);
  const gross = grossOf(input, asset.scale);
  if (gross === 0n) throw new LedgerError("rates_to_zero", "quantity × unit_price is less than one smallest unit of the asset");
  checkUsageLimits(
    {
      quantity: parseDecimal(input.quantity)!,
      unit: input.unit,
      periodStart: input.periodStart,
      periodEnd: input.periodEnd,
      gross,
      pricedBy: input.amount !== undefined ? "amount" : "unitPrice",
    },
    limitsOf(facts.limits.get(`${m}|${asset.id}`), asset.scale),
    input.asset,
  );
  const schedule = facts.schedules.get(m)?.find((s) => s.effectiveFrom.getTime() <= input.periodEnd.getTime());
  if (!schedule) throw new LedgerError("no_fee_schedule", `marketplace ${m} has no fee schedule in force at ${input.periodEnd.toISOString()}`);
  const rules = schedule.rules.map((r) => resolveRule(r, { resource: input.resource, operatorId: input.operatorId, assetCode: input.asset }));
  let payer: Planned["payer"] = chart.customer(asset.id, m, input.customerId, billing === "prepaid");
  if (input.holdId !== undefined) payer = holdPayer(input, m, asset.id, facts);
  return {
    index,
    item,
    hash,
    usageId: uuidv7(now),
    assetId: asset.id,
    scale: asset.scale,
    split: splitGross(gross, rules),
    feeScheduleVersion: schedule.version,
    newestScheduleVersion: facts.schedules.get(m)![0]!.version,
    booking,
    payer,
    operator: chart.operatorPayable(asset.id, input.operatorId),
    fees: rules.map((r) => chart.fees(asset.id, m, r.party)),
  };
}

/** The escrow account of the open hold a record is charged to. */
/** A marketplace with a pricing currency rates its usage in it (docs/settlement.md). */
function refuseOtherThanPricing(pricing: string | undefined, m: string, asset: string): void {
  if (pricing === undefined || pricing === asset) return;
  const message = `marketplace ${m} prices its usage in ${pricing}: records in ${asset} are refused (operators choose what they are paid in)`;
  throw new LedgerError("asset_mismatch", message, [{ path: "asset", message: `must be ${pricing}` }]);
}

function holdPayer(input: UsageInput, m: string, assetId: string, facts: MarketplaceFacts): { accountId: string } {
  const hold = facts.holds.get(input.holdId!);
  if (!hold || hold.marketplaceId !== m)
    throw new LedgerError("hold_not_found", `hold ${input.holdId} does not exist`, [{ path: "holdId", message: "does not exist" }]);
  if (hold.customerId !== input.customerId || hold.assetId !== assetId) {
    throw new LedgerError("invalid_request", `hold ${input.holdId} reserves funds of another customer or asset`, [
      { path: "holdId", message: "belongs to another customer or asset" },
    ]);
  }
  // Past its expiry a hold takes no more usage, even before the expirer has closed it.
  if (hold.status !== "open" || hold.expired)
    throw new LedgerError("hold_closed", `hold ${input.holdId} is ${hold.status === "open" ? "expired" : hold.status}`);
  return { accountId: hold.escrowAccountId };
}

function grossOf(input: UsageInput, scale: number): bigint {
  const quantity = parseDecimal(input.quantity);
  if (!quantity)
    throw new LedgerError("invalid_request", 'quantity must be a decimal number of at most 40 digits and 18 decimals, e.g. "3600" or "1.5"', [
      { path: "quantity", message: "invalid" },
    ]);
  if (quantity.digits === 0n)
    throw new LedgerError("invalid_request", "quantity must be greater than zero", [{ path: "quantity", message: "must be greater than zero" }]);
  if ((input.amount === undefined) === (input.unitPrice === undefined)) {
    throw new LedgerError("invalid_request", "give either unit_price or amount", [{ path: "unitPrice", message: "give either unit_price or amount" }]);
  }
  if (input.amount !== undefined) {
    const amount = parseUnits(input.amount);
    if (amount === undefined)
      throw new LedgerError("invalid_request", "amount must be an integer in the asset's smallest unit", [{ path: "amount", message: "invalid" }]);
    return amount;
  }
  const price = parseDecimal(input.unitPrice!);
  if (!price)
    throw new LedgerError("invalid_request", "unit_price must be a decimal number of at most 40 digits and 18 decimals", [
      { path: "unitPrice", message: "invalid" },
    ]);
  return grossFromPrice(quantity, price, scale);
}
