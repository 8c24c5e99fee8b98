import { z } from "@hono/zod-openapi";
import { unitsToDecimal } from "../domain/money.js";

/**
 * The display twin of an amount. Reads and reports give every amount twice: `<field>` as the string
 * of the integer in the asset's smallest unit (what to compute with), and `<field>_display` as the
 * same integer in the asset's display units (its scale's decimals), formatted from the integer's
 * digits by unitsToDecimal (never through a float; no trailing zeros): "1500000" at scale 6 is "1.5".
 */
export const DisplayAmount = z.string().openapi({
  example: "1.5",
  description: "the amount beside it in the asset's display units (the asset's scale in decimals), formatted exactly from the integer",
});

/** `units` (smallest units, as a bigint or the API's integer string) in display units at `scale`. */
export function display(units: bigint | string, scale: number): string {
  return unitsToDecimal(typeof units === "bigint" ? units : BigInt(units), scale);
}

/** As display, with null for a missing amount. */
export function displayOrNull(units: bigint | string | null | undefined, scale: number): string | null {
  return units === null || units === undefined ? null : display(units, scale);
}
