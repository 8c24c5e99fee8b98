import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { getProposal, listProposals, PROPOSAL_KINDS } from "../../services/proposals.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { CursorQuery, IdParam, page, pageOf } from "../schemas.js";
import { errorResponses, json, listWindow, security } from "./common.js";
import { MarketplaceId } from "./party-schemas.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

const Query = CursorQuery.extend({
  status: z.enum(["proposed", "approved", "rejected"]).optional(),
  kind: z.enum(PROPOSAL_KINDS).optional(),
  marketplace_id: MarketplaceId.optional(),
});

const list = createRoute({
  method: "get",
  path: "/v1/proposals",
  operationId: "listProposals",
  tags: ["funding"],
  summary: "List proposals, newest first (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: { query: Query },
  responses: { 200: json(page(ProposalOut, "ProposalPage"), "a page of proposals"), ...errorResponses },
});

const get = createRoute({
  method: "get",
  path: "/v1/proposals/{id}",
  operationId: "getProposal",
  tags: ["funding"],
  summary: "A proposal (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  request: { params: IdParam },
  responses: { 200: json(ProposalOut, "the proposal"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(list, async (c) => {
    const q = c.req.valid("query");
    listWindow(q);
    const rows = await listProposals(c.get("deps").ledger.db, {
      status: q.status,
      kind: q.kind,
      marketplaceId: q.marketplace_id,
      afterId: q.cursor,
      limit: q.limit + 1,
    });
    return c.json(
      pageOf(rows, q.limit, proposalOut, (r) => r.id),
      200,
    );
  });
  app.openapi(get, async (c) => {
    const { id } = c.req.valid("param");
    const p = await getProposal(c.get("deps").ledger.db, id);
    if (!p) throw new ApiError("proposal_not_found", `proposal ${id} does not exist`);
    return c.json(proposalOut(p), 200);
  });
}
