import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Principal } from "../../domain/access.js";
import { getProposal, listProposals, PROPOSAL_KINDS, proposalConcerns, type ProposalParty } from "../../services/proposals.js";
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
  marketplace_id: MarketplaceId.optional().openapi({
    description: "only this marketplace's proposals (a marketplace key sees its own: naming another finds nothing)",
  }),
});

const list = createRoute({
  method: "get",
  path: "/v1/proposals",
  operationId: "listProposals",
  tags: ["funding"],
  summary: "List proposals, newest first (admin, finance; marketplace and operator keys see the proposals about their own party)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace", "operator")] as const,
  request: { query: Query },
  responses: { 200: json(page(ProposalOut, "ProposalPage"), "a page of proposals"), ...errorResponses },
});

const get = createRoute({
  method: "get",
  path: "/v1/proposals/{id}",
  operationId: "getProposal",
  tags: ["funding"],
  summary: "A proposal (admin, finance; a marketplace or operator key, one about its own party)",
  security,
  middleware: [requireRole("admin", "finance", "marketplace", "operator")] as const,
  request: { params: IdParam },
  responses: { 200: json(ProposalOut, "the proposal"), ...errorResponses },
});

/** A marketplace or operator key's party; undefined for platform keys (admin, finance), which see every proposal. */
function partyOf(p: Principal): ProposalParty | undefined {
  return p.role === "marketplace" || p.role === "operator" ? { role: p.role, id: p.scopeId! } : undefined;
}

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(list, async (c) => {
    const q = c.req.valid("query");
    listWindow(q);
    const party = partyOf(c.get("principal"));
    const rows =
      party?.role === "marketplace" && q.marketplace_id !== undefined && q.marketplace_id !== party.id
        ? []
        : await listProposals(c.get("deps").ledger.db, {
            status: q.status,
            kind: q.kind,
            marketplaceId: q.marketplace_id,
            party,
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
    const party = partyOf(c.get("principal"));
    // Another party's proposal is answered as one that does not exist.
    if (!p || (party && !proposalConcerns(party, p))) throw new ApiError("proposal_not_found", `proposal ${id} does not exist`);
    return c.json(proposalOut(p), 200);
  });
}
