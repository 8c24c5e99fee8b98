import { z } from "@hono/zod-openapi";
import type { RateLockRow } from "../../services/conversion-reads.js";
import { formatRate } from "../../domain/conversion.js";
import { display, DisplayAmount } from "../display.js";
import { Timestamp, Uuid } from "../schemas.js";

/** A rate lock (docs/settlement.md, "Rate policy"): earnings of an `at_earning` marketplace with the rate they are converted at. */
export const RateLockOut = z
  .object({
    id: Uuid,
    marketplace_id: z.string().openapi({ example: "gpu-market", description: "the marketplace whose usage earned it" }),
    operator_id: z.string().openapi({ example: "op-datacenter-7" }),
    from_asset: z.string().openapi({ example: "USD", description: "the pricing currency the earnings are in" }),
    to_asset: z.string().openapi({ example: "NET", description: "the asset this share of the earnings is paid in (by the operator's preference when locked)" }),
    amount: z.string().openapi({ example: "26700000", description: "the earnings locked, in `from_asset`'s smallest units" }),
    amount_display: DisplayAmount,
    consumed: z.string().openapi({ example: "0", description: "what convert payouts have used of it so far (oldest lock first)" }),
    consumed_display: DisplayAmount,
    released: z.string().openapi({
      example: "0",
      description: "what reversals of its records gave back (each its share): no longer usable; what is left is amount − consumed − released",
    }),
    released_display: DisplayAmount,
    rate: z.string().openapi({ example: "0.4", description: "whole `to_asset` per whole `from_asset`, as a decimal (rounded half-up at 18 decimals)" }),
    rate_num: z.string().openapi({ description: "the rate exactly: rate_num / rate_den" }),
    rate_den: z.string(),
    rate_id: Uuid.openapi({ description: "the stored rate (GET /v1/rates)" }),
    rate_source: z.enum(["feed", "manual"]),
    rate_observed_at: Timestamp,
    records: z.string().openapi({ example: "12", description: "how many usage records' earnings it locks" }),
    earned_from: Timestamp.openapi({ description: "when the first of those records was recorded" }),
    locked_at: Timestamp,
  })
  .openapi("RateLock");

const iso = (t: Date | string) => new Date(t).toISOString();

export const rateLockOut = (r: RateLockRow) => ({
  id: r.id,
  marketplace_id: r.marketplace_id,
  operator_id: r.operator_id,
  from_asset: r.from_asset,
  to_asset: r.to_asset,
  amount: r.amount,
  amount_display: display(r.amount, r.from_scale),
  consumed: r.consumed,
  consumed_display: display(r.consumed, r.from_scale),
  released: r.released,
  released_display: display(r.released, r.from_scale),
  rate: formatRate({ num: BigInt(r.rate_num), den: BigInt(r.rate_den) }),
  rate_num: r.rate_num,
  rate_den: r.rate_den,
  rate_id: r.rate_id,
  rate_source: r.source,
  rate_observed_at: iso(r.observed_at),
  records: r.records,
  earned_from: iso(r.earned_from),
  locked_at: iso(r.locked_at),
});
