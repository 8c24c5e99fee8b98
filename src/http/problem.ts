import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { LedgerError, type FieldIssue, type LedgerErrorCode } from "../domain/errors.js";

/**
 * Every error the API returns, as one closed set of stable codes, each with its HTTP status. The
 * problem's `type` is `/problems/<code>`; clients should branch on `code` (or `type`), not on `detail`.
 */
const httpStatusOf = {
  // request shape
  invalid_request: 400,
  malformed_json: 400,
  idempotency_key_required: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  request_timeout: 408,
  // who is calling
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  rate_limited: 429,
  // state
  asset_not_found: 404,
  account_not_found: 404,
  pending_not_found: 404,
  transfer_not_found: 404,
  asset_exists: 409,
  account_exists: 409,
  idempotency_conflict: 409,
  idempotency_key_reused: 409,
  pending_already_posted: 409,
  pending_already_voided: 409,
  pending_expired: 409,
  already_reversed: 409,
  asset_retired: 409,
  payouts_in_flight: 409,
  asset_mismatch: 422,
  exceeds_credits: 422,
  exceeds_debits: 422,
  overflow: 422,
  not_pending: 422,
  not_reversible: 422,
  post_amount_exceeds_pending: 422,
  partial_post_needs_single_leg: 422,
  // usage
  period_closing: 409,
  period_transition: 409,
  period_closed: 409,
  marketplace_not_found: 404,
  customer_not_found: 404,
  operator_not_found: 404,
  usage_not_found: 404,
  usage_batch_not_found: 404,
  hold_not_found: 404,
  hold_closed: 409,
  marketplace_exists: 409,
  customer_exists: 409,
  customer_retired: 409,
  operator_exists: 409,
  invitation_not_found: 404,
  fee_schedule_exists: 409,
  usage_conflict: 409,
  no_fee_schedule: 422,
  usage_in_future: 422,
  usage_limit_exceeded: 422,
  capacity_exceeded: 422,
  capacity_exists: 409,
  operator_costs_not_found: 404,
  credit_limit_exceeded: 422,
  credit_limit_in_use: 409,
  rates_to_zero: 422,
  atomic_batch_aborted: 422,
  // payouts
  payout_not_found: 404,
  challenge_not_found: 404,
  payout_not_pending: 409,
  payout_address_missing: 422,
  payout_below_minimum: 422,
  payout_limit_exceeded: 422,
  payout_unfunded: 422,
  payout_not_approved: 409,
  chain_not_configured: 422,
  no_rate_source: 422,
  challenge_invalid: 422,
  signature_invalid: 422,
  // reconciliation
  reconciliation_not_found: 404,
  reconciliation_item_not_found: 404,
  item_already_resolved: 409,
  // four eyes
  proposal_not_found: 404,
  proposal_decided: 409,
  proposal_outdated: 409,
  four_eyes: 403,
  receipt_exists: 409,
  // disputes and clawbacks
  dispute_not_found: 404,
  dispute_decided: 409,
  usage_disputed: 409,
  dispute_window_closed: 422,
  payout_withheld: 422,
  // webhooks
  webhook_endpoint_not_found: 404,
  webhook_delivery_not_found: 404,
  webhook_url_refused: 422,
  // events
  balance_monitor_not_found: 404,
  // the service
  unavailable: 503,
  chain_unavailable: 503,
  internal: 500,
} as const satisfies Record<LedgerErrorCode | string, number>;

export type ProblemCode = keyof typeof httpStatusOf;
export const problemCodes = Object.keys(httpStatusOf) as [ProblemCode, ...ProblemCode[]];

const titles: Partial<Record<ProblemCode, string>> = {
  invalid_request: "The request is invalid",
  malformed_json: "The body is not valid JSON",
  unauthorized: "Missing or invalid API key",
  forbidden: "This key's role may not do this",
  not_found: "Not found",
  method_not_allowed: "The route does not take this method",
  request_timeout: "The body did not arrive in time",
  exceeds_credits: "Insufficient funds",
  internal: "Internal error",
  unavailable: "Service unavailable",
};

export const Problem = z
  .object({
    type: z.string().openapi({ description: "/problems/<code>: a page saying what the problem means and what to do", example: "/problems/exceeds_credits" }),
    title: z.string().openapi({ example: "Insufficient funds" }),
    status: z.number().int().openapi({ description: "the HTTP status of the answer", example: 422 }),
    code: z.enum(problemCodes).openapi({ description: "stable: branch on it", example: "exceeds_credits" }),
    detail: z.string().openapi({
      description: "for people: what was wrong with this request",
      example:
        "insufficient funds on account 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e: 1000000 available, this transfer takes 1500000, 500000 short (amounts in the asset's smallest unit)",
    }),
    errors: z
      .array(
        z.object({
          path: z.string().openapi({ example: "legs.0.amount" }),
          message: z.string().openapi({ example: "must be from 1 to 2^256 - 1, without leading zeros" }),
        }),
      )
      .optional()
      .openapi({ description: "the fields at fault, when the problem is about fields" }),
    request_id: z.string().optional().openapi({ description: "quote it when reporting a problem", example: "0193a5c2-7d41-7e6b-8f20-3c9d1e4b5a67" }),
  })
  .openapi("Problem");
export type Problem = z.infer<typeof Problem>;

/** An error to answer with a problem document. */
export class ApiError extends Error {
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly errors: FieldIssue[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }

  /**
   * From a refusal of the domain or a use case, whose field paths are in code casing (camelCase):
   * the paths, and the detail built from them, are put in the API's casing. A refusal whose message
   * is a sentence of its own (naming the value or limit at fault: "asset NOPE does not exist")
   * keeps it as the detail, which then says more than its issues ("asset: does not exist").
   */
  static from(err: LedgerError): ApiError {
    if (err.issues.length === 0) return new ApiError(err.code, err.message);
    const issues = err.issues.map((i) => ({ path: toWirePath(i.path), message: i.message }));
    const listed = err.issues.map((i) => `${i.path}: ${i.message}`).join("; ");
    const ownSentence = err.message !== listed && !err.issues.some((i) => i.message === err.message);
    return new ApiError(err.code, ownSentence ? err.message : issues.map((i) => `${i.path}: ${i.message}`).join("; "), issues);
  }
}

export function problemBody(code: ProblemCode, detail: string, errors: FieldIssue[] = [], requestId?: string): Problem {
  return {
    type: `/problems/${code}`,
    title: titles[code] ?? code.replace(/_/g, " "),
    status: httpStatusOf[code],
    code,
    detail,
    ...(errors.length > 0 ? { errors: errors.map((e) => ({ path: e.path, message: e.message })) } : {}),
    ...(requestId ? { request_id: requestId } : {}),
  };
}

/** Field paths from the domain (camelCase) in the API's casing (snake_case). */
export function toWirePath(path: string): string {
  return path.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
}

export function problemResponse(c: Context, err: ApiError | LedgerError): Response {
  const e = err instanceof LedgerError ? ApiError.from(err) : err;
  const body = problemBody(e.code, e.detail, e.errors, c.get("requestId"));
  return new Response(JSON.stringify(body), {
    status: body.status,
    headers: { "content-type": "application/problem+json", ...e.headers, "x-request-id": c.get("requestId") ?? "" },
  });
}

export const problemStatus = (code: ProblemCode) => httpStatusOf[code];
