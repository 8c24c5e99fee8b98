import { z } from "@hono/zod-openapi";
import { parseUnits } from "../domain/money.js";

/** Amounts travel as strings of integer smallest units: JSON numbers lose precision past 2^53. */
export const Amount = z
  .string({
    error: (i) =>
      i.input === undefined
        ? "is required"
        : 'must be a string holding an integer amount in the asset\'s smallest unit, e.g. "1500000" (JSON numbers lose precision)',
  })
  .superRefine((v, ctx) => {
    if (!/^[0-9]+$/.test(v)) {
      ctx.addIssue({ code: "custom", message: "must be an integer amount in the asset's smallest unit: digits only, no sign, decimal point or exponent" });
    } else {
      const units = parseUnits(v);
      if (units === undefined || units === 0n) ctx.addIssue({ code: "custom", message: "must be from 1 to 2^256 - 1, without leading zeros" });
    }
  })
  .openapi({ example: "1500000", description: "integer amount in the asset's smallest unit, as a string" });

/**
 * A string field that holds a number (a limit, a rate): clients often send it as a JSON number, so
 * say why it must be a string rather than zod's "expected string, received number".
 */
export const numberAsString = (example: string) => ({
  error: (i: { input?: unknown }) => (i.input === undefined ? "is required" : `must be a string, e.g. "${example}" (JSON numbers lose precision)`),
});

/** Balances may be zero or negative (a receivable); same string form. */
export const SignedAmount = z.string().openapi({ example: "1500000", description: "integer amount in smallest units, as a string (may be negative)" });

/** An asset's code (USDC, USDC-8453, ETH), as bodies and filters name assets. */
export const AssetCode = z
  .string()
  .regex(/^[A-Z0-9][A-Z0-9._-]{0,31}$/, "must be an asset code in capital letters, such as USDC")
  .openapi({ example: "USDC" });
