import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { roles } from "../auth.js";
import type { AppEnv } from "../env.js";
import { ApiError } from "../problem.js";
import { Amount, IdParam, Metadata, Timestamp, Transfer } from "../schemas.js";
import { submitTransfer } from "../submit-transfers.js";
import { unusableAccounts, visibleTransfer } from "../visibility.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";

/** POST /v1/transfers/{id}/post, /void and /reverse: the three ways to act on an earlier transfer. */
const actions = {
  post: {
    summary: "Post a hold, in full or in part (admin, marketplace)",
    body: z.strictObject({
      amount: Amount.optional().openapi({ description: "post less than the hold (single-leg holds); the rest is released" }),
      effective_at: Timestamp.optional(),
      metadata: Metadata.optional(),
    }).openapi("PostPending"),
  },
  void: {
    summary: "Release a hold (admin, marketplace)",
    body: z.strictObject({ metadata: Metadata.optional() }).openapi("VoidPending"),
  },
  reverse: {
    summary: "Reverse a posted transfer, once, in full (admin, marketplace)",
    body: z.strictObject({ effective_at: Timestamp.optional(), metadata: Metadata.optional() }).openapi("Reverse"),
  },
} as const;

export function register(app: OpenAPIHono<AppEnv>): void {
  for (const [action, spec] of Object.entries(actions) as [keyof typeof actions, (typeof actions)[keyof typeof actions]][]) {
    const route = createRoute({
      method: "post", path: `/v1/transfers/{id}/${action}`, tags: ["ledger"], summary: spec.summary, security, middleware: [roles("admin", "marketplace")] as const,
      request: { params: IdParam, headers: IdempotencyHeader, body: jsonBody(spec.body as z.ZodType<Record<string, unknown>>, false) },
      responses: { 201: json(Transfer, "the transfer that posted, voided or reversed it"), ...errorResponses },
    });
    app.openapi(route, async (c) => {
      const { id } = c.req.valid("param");
      const body = c.req.valid("json") as { amount?: string; effective_at?: string; metadata?: Record<string, unknown> };
      const target = await visibleTransfer(c, id);
      const unusable = await unusableAccounts(c, target.legs.flatMap((l) => [l.debitAccountId, l.creditAccountId]));
      if (unusable.size > 0) throw new ApiError("transfer_not_found", `transfer ${id} does not exist`);
      const common = {
        effectiveAt: body.effective_at === undefined ? undefined : new Date(body.effective_at),
        metadata: body.metadata,
      };
      const input =
        action === "post" ? { kind: "post_pending" as const, pendingId: id, amount: body.amount === undefined ? undefined : BigInt(body.amount), ...common }
        : action === "void" ? { kind: "void_pending" as const, pendingId: id, metadata: body.metadata }
        : { kind: "reversal" as const, reversesId: id, ...common };
      return submitTransfer(c, { action, body }, input) as never;
    });
  }
}
