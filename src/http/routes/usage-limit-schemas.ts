import { z } from "@hono/zod-openapi";
import type { UsageLimitsView } from "../../services/usage-limits.js";
import { display, DisplayAmount } from "../display.js";

export const UsageLimitsOut = z
  .object({
    marketplace_id: z.string(),
    asset: z.string(),
    max_gross_per_record: z.string().openapi({ description: "the largest gross of one usage record, in the asset's smallest units" }),
    max_gross_per_record_display: DisplayAmount,
    max_quantity_per_second: z
      .record(z.string(), z.string())
      .openapi({ description: "per unit set by an admin: the largest quantity per second of a record's period" }),
    defaults: z
      .object({ max_gross_per_record: z.string(), max_gross_per_record_display: DisplayAmount, max_quantity_per_second: z.record(z.string(), z.string()) })
      .openapi({
        description:
          "what applies where nothing is set: time units (*_second, *_minute, *_hour) allow 100,000 of the resource at once; other units have no rate limit",
      }),
    updated_by: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .openapi("UsageLimits");

export const usageLimitsOut = (l: UsageLimitsView) => ({
  marketplace_id: l.marketplaceId,
  asset: l.asset,
  max_gross_per_record: l.maxGrossPerRecord.toString(),
  max_gross_per_record_display: display(l.maxGrossPerRecord, l.scale),
  max_quantity_per_second: l.maxQuantityPerSecond,
  defaults: {
    max_gross_per_record: l.defaults.maxGrossPerRecord.toString(),
    max_gross_per_record_display: display(l.defaults.maxGrossPerRecord, l.scale),
    max_quantity_per_second: l.defaults.maxQuantityPerSecond,
  },
  updated_by: l.updatedBy,
  updated_at: l.updatedAt?.toISOString() ?? null,
});
