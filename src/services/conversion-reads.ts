/**
 * The read side of hybrid settlement the API serves (docs/settlement.md): rates with their source
 * and the conversions booked when convert payouts were paid, each a single statement exposed as it
 * is (who may see which conversions is the route's to decide).
 */
export { listConversions, listRates, type ConversionRow, type RateRow } from "../db/queries/conversions.js";
export { listRateLocks, type RateLockRow } from "../db/queries/rate-locks.js";
