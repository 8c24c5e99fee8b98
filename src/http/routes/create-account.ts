import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { createAccount } from "../../services/create-account.js";
import { requireRole } from "../auth.js";
import { jsonBodyGuard } from "../json-body.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { ApiError } from "../problem.js";
import { Account, Identifier, Metadata, Uuid } from "../schemas.js";
import { accountOut } from "../serialize.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";

const Body = z
  .strictObject({
    asset_id: Uuid,
    code: z.string().openapi({ description: "account type in the chart of accounts", example: "customer_prepaid" }),
    normal_side: z.enum(["debit", "credit"]),
    ref: Identifier.optional().openapi({
      description:
        "your key for the account, unique per asset and marketplace; makes creation idempotent. The refs of the service's own chart (customer:, operator:, hold:, deposits:, payouts:, treasury:, expense:, protocol:, *:fees) are reserved",
      example: "wallet:c42",
    }),
    marketplace_id: Identifier.optional().openapi({
      description: "the marketplace the account belongs to (marketplace keys: always their own)",
      example: "gpu-market",
    }),
    owner_type: Identifier.optional().openapi({ example: "customer" }),
    owner_id: Identifier.optional().openapi({ example: "c42" }),
    debits_must_not_exceed_credits: z.boolean().optional().openapi({ description: "no overdraft: refuse transfers that would take the balance below zero" }),
    credits_must_not_exceed_debits: z.boolean().optional(),
    metadata: Metadata.optional(),
  })
  .refine((a) => (a.owner_type === undefined) === (a.owner_id === undefined), { message: "owner_type and owner_id go together", path: ["owner_id"] })
  .openapi("AccountCreate");

const route = createRoute({
  method: "post",
  path: "/v1/accounts",
  operationId: "createAccount",
  tags: ["ledger"],
  summary: "Open an account (admin, marketplace)",
  security,
  middleware: [requireRole("admin", "marketplace"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(Account, "opened (or the identical account with this ref)"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const principal = c.get("principal");
    if (principal.role === "marketplace" && body.marketplace_id !== undefined && body.marketplace_id !== principal.scopeId) {
      throw new ApiError("forbidden", "a marketplace key can only open accounts of its own marketplace");
    }
    const marketplaceId = principal.role === "marketplace" ? principal.scopeId! : body.marketplace_id;
    // Operators' and the platform's accounts are opened by the service itself (or an admin): a
    // marketplace must not be able to make an account that shows up in another tenant's views.
    if (principal.role === "marketplace" && (body.owner_type === "operator" || body.owner_type === "platform")) {
      throw new ApiError("forbidden", `a marketplace key cannot open accounts owned by a ${body.owner_type}`);
    }
    return idempotently(c, body, async (tx) => {
      const account = await createAccount(tx, {
        assetId: body.asset_id,
        code: body.code,
        normalSide: body.normal_side,
        ref: body.ref,
        marketplaceId,
        ownerType: body.owner_type,
        ownerId: body.owner_id,
        metadata: body.metadata,
        debitsMustNotExceedCredits: body.debits_must_not_exceed_credits,
        creditsMustNotExceedDebits: body.credits_must_not_exceed_debits,
      });
      return { status: 201, body: accountOut(account) };
    }) as never;
  });
}
