import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { approveProposal, rejectProposal } from "../../services/proposals.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { IdParam } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

const Reason = z
  .string()
  .min(1)
  .max(2000)
  .refine((s) => !s.includes("\u0000"), "must not contain NUL characters");

const approve = createRoute({
  method: "post",
  path: "/v1/proposals/{id}/approve",
  operationId: "approveProposal",
  tags: ["funding"],
  summary: "Approve a proposal and carry it out (another key than the proposer's, of a role that may approve its kind)",
  security,
  middleware: [requireRole("admin", "finance"), jsonBodyGuard] as const,
  request: { params: IdParam, headers: IdempotencyHeader, body: jsonBody(z.strictObject({ reason: Reason.optional() }).openapi("ProposalApprove"), false) },
  responses: { 200: json(ProposalOut, "the approved proposal, with what it did"), ...errorResponses },
});

const reject = createRoute({
  method: "post",
  path: "/v1/proposals/{id}/reject",
  operationId: "rejectProposal",
  tags: ["funding"],
  summary: "Reject a proposal: nothing moves (another key than the proposer's)",
  security,
  middleware: [requireRole("admin", "finance"), jsonBodyGuard] as const,
  request: { params: IdParam, headers: IdempotencyHeader, body: jsonBody(z.strictObject({ reason: Reason }).openapi("ProposalReject")) },
  responses: { 200: json(ProposalOut, "the rejected proposal"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(approve, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json") ?? {};
    return replayOrRun(c, body, async (_, receipts) => {
      const p = await approveProposal(c.get("deps").ledger.db, {
        id,
        by: { ...c.get("principal"), receipt: receipts.audited(200) },
        reason: body.reason ?? null,
      });
      return { status: 200, body: proposalOut(p), receipt: "audit" };
    }) as never;
  });
  app.openapi(reject, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    return replayOrRun(c, body, async (_, receipts) => {
      const p = await rejectProposal(c.get("deps").ledger.db, { id, by: { ...c.get("principal"), receipt: receipts.audited(200) }, reason: body.reason });
      return { status: 200, body: proposalOut(p), receipt: "audit" };
    }) as never;
  });
}
