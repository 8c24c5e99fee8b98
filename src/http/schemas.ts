import { z } from "@hono/zod-openapi";
import { DisplayAmount } from "./display.js";
import { SignedAmount } from "./money-schemas.js";

export const Uuid = z.uuid({ error: "must be a uuid" }).openapi({ example: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e" });

export const Timestamp = z.iso
  .datetime({
    offset: true,
    // A "+01:00" offset typed into a URL arrives as " 01:00": a query string reads "+" as a space.
    error: (i) =>
      typeof i.input === "string" && /T[0-9:.]+ [0-9]{2}:?[0-9]{2}$/.test(i.input)
        ? `must be an RFC 3339 date-time, e.g. 2026-11-29T12:00:00Z: in a URL, send the "+" of an offset as %2B (a "+" reads as a space)`
        : "must be an RFC 3339 date-time, e.g. 2026-11-29T12:00:00Z",
  })
  .refine((v) => {
    const t = Date.parse(v);
    // Not a date-time at all is named by the format check alone.
    return Number.isNaN(t) || (t >= Date.UTC(1970, 0, 1) && t < Date.UTC(10000, 0, 1));
  }, "must be between 1970 and 9999")
  .openapi({ example: "2026-11-29T12:00:00Z" });

const MAX_METADATA_DEPTH = 8;
/** Nesting depth of a JSON value, counted no further than limit + 1 (no spread: arrays may be huge). */
function depthOf(v: unknown, limit: number): number {
  if (limit < 0 || v === null || typeof v !== "object") return 0;
  let deepest = 0;
  for (const x of Object.values(v as object)) {
    deepest = Math.max(deepest, depthOf(x, limit - 1));
    if (deepest > limit) break;
  }
  return 1 + deepest;
}

export const Metadata = z
  .record(z.string().max(64), z.unknown())
  .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= 16 * 1024, { message: "must be at most 16 KiB as JSON", abort: true })
  .refine((m) => depthOf(m, MAX_METADATA_DEPTH) <= MAX_METADATA_DEPTH, `must nest at most ${MAX_METADATA_DEPTH} levels deep`)
  .refine((m) => !JSON.stringify(m).includes("\\u0000"), "must not contain NUL characters")
  .openapi({ description: "free-form JSON object, up to 16 KiB and 8 levels deep", example: { job_id: "job_42" } });

/** Free identifiers chosen by callers (refs, owner ids): printable, no spaces at either end. */
export const Identifier = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,199}$/, "must be 1-200 characters of letters, digits and _ . : @ / -, starting with a letter or digit")
  .openapi({ example: "wallet:acme-ai" });

export const CursorQuery = z.strictObject({
  cursor: z.string().max(200).optional().openapi({ description: "next_cursor of the previous page", example: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e" }),
  limit: z
    .string()
    .regex(/^[0-9]{1,4}$/, "must be a whole number from 1 to 1000")
    .transform(Number)
    .pipe(z.number().min(1, "must be a whole number from 1 to 1000").max(1000, "must be a whole number from 1 to 1000"))
    .optional()
    .transform((v) => v ?? 100)
    .openapi({ type: "integer", minimum: 1, maximum: 1000, default: 100 }),
});

export const IdParam = z.object({ id: Uuid.openapi({ param: { name: "id", in: "path" } }) });

export const Asset = z
  .object({
    id: Uuid,
    code: z.string(),
    scale: z.number().int(),
    settlement: z.object({ kind: z.enum(["erc20", "native", "offchain"]), chain_id: z.number().int().optional(), token_address: z.string().optional() }),
    created_at: Timestamp,
    retired_at: Timestamp.nullable().openapi({
      description: "when it was retired: no new accounts, transfers, usage, holds or deposits in it (its balances can still be paid out); null while in use",
    }),
    rate_max_age_seconds: z
      .number()
      .int()
      .optional()
      .openapi({ description: "conversions into or out of it use no rate observed longer ago than this (docs/settlement.md)", example: 3600 }),
    rate_max_deviation_bps: z
      .number()
      .int()
      .optional()
      .openapi({ description: "conversions stop while two fresh sources of its rate are further apart than this", example: 100 }),
  })
  .openapi("Asset");

export const Account = z
  .object({
    id: Uuid,
    asset_id: Uuid,
    ref: z.string().nullable(),
    code: z.string(),
    marketplace_id: z.string().nullable(),
    owner_type: z.string().nullable(),
    owner_id: z.string().nullable(),
    normal_side: z.enum(["debit", "credit"]),
    debits_must_not_exceed_credits: z.boolean(),
    credits_must_not_exceed_debits: z.boolean(),
    metadata: Metadata,
    opened_by_service: z.boolean().openapi({
      description:
        "part of the service's chart of accounts (customers', operators', fee, hold, clearing, treasury accounts): only the service moves money on it",
    }),
    created_at: Timestamp,
  })
  .openapi("Account");

export const Balance = z
  .object({
    account_id: Uuid,
    as_of: Timestamp.nullable().openapi({ description: "the effective instant read, or null for now" }),
    posted: SignedAmount,
    posted_display: DisplayAmount,
    available: SignedAmount,
    available_display: DisplayAmount,
    debits_posted: SignedAmount,
    debits_posted_display: DisplayAmount,
    credits_posted: SignedAmount,
    credits_posted_display: DisplayAmount,
    debits_pending: SignedAmount,
    debits_pending_display: DisplayAmount,
    credits_pending: SignedAmount,
    credits_pending_display: DisplayAmount,
  })
  .openapi("Balance");

export const Entry = z
  .object({
    id: z.string(),
    transfer_id: Uuid,
    leg: z.number().int(),
    side: z.enum(["debit", "credit"]),
    posted_amount: SignedAmount,
    posted_amount_display: DisplayAmount,
    pending_amount: SignedAmount,
    pending_amount_display: DisplayAmount,
    balance_after: SignedAmount.openapi({ description: "posted balance on the normal side after this entry" }),
    balance_after_display: DisplayAmount,
    effective_at: Timestamp,
    created_at: Timestamp,
  })
  .openapi("Entry");

export const Leg = z
  .object({
    debit_account_id: Uuid,
    credit_account_id: Uuid,
    asset_id: Uuid,
    amount: SignedAmount.openapi({ description: "what the leg moved: posted amount, or the pending amount of a hold, void or expiry" }),
    amount_display: DisplayAmount,
    posted_amount: SignedAmount,
    posted_amount_display: DisplayAmount,
    pending_amount: SignedAmount,
    pending_amount_display: DisplayAmount,
  })
  .openapi("Leg");

export const Transfer = z
  .object({
    id: Uuid,
    type: z.enum(["standard", "pending", "post_pending", "void_pending", "expire_pending", "reversal"]),
    status: z.enum(["posted", "pending", "voided", "expired", "reversed"]),
    pending_id: Uuid.nullable(),
    reverses_id: Uuid.nullable(),
    timeout_at: Timestamp.nullable(),
    effective_at: Timestamp,
    created_at: Timestamp,
    metadata: Metadata,
    legs: z.array(Leg),
  })
  .openapi("Transfer");

export const page = <T extends z.ZodType>(item: T, name: string) =>
  z
    .object({
      data: z.array(item),
      next_cursor: z
        .string()
        .nullable()
        .openapi({ description: "pass it as `cursor` for the next page; null on the last page", example: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e" }),
      limit: z.number().int().openapi({ description: "the page size asked for (or the default): a page holds at most this many items", example: 100 }),
    })
    .openapi(name);

/**
 * A list's answer from rows read with `limit + 1` (the extra row tells whether a next page exists):
 * the first `limit` rows, the cursor after the last of them (null on the last page), and the limit.
 */
export function pageOf<R, O>(
  rows: readonly R[],
  limit: number,
  out: (row: R) => O,
  cursorOf: (row: R) => string,
): { data: O[]; next_cursor: string | null; limit: number } {
  const items = rows.slice(0, limit);
  return { data: items.map(out), next_cursor: rows.length > limit ? cursorOf(items[items.length - 1]!) : null, limit };
}
