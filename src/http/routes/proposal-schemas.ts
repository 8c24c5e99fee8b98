import { z } from "@hono/zod-openapi";
import type { Proposal } from "../../services/proposals.js";
import { PROPOSAL_KINDS } from "../../services/proposals.js";

export const ProposalOut = z
  .object({
    id: z.string(),
    kind: z.enum(PROPOSAL_KINDS),
    marketplace_id: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()).openapi({ description: "what is asked (amounts as strings)" }),
    status: z.enum(["proposed", "approved", "rejected"]),
    proposed_by: z.string().openapi({ description: "the API key that proposed it" }),
    proposed_at: z.string(),
    decided_by: z.string().nullable().openapi({ description: "the other API key that approved or rejected it" }),
    decided_at: z.string().nullable(),
    reason: z.string().nullable(),
    result: z.record(z.string(), z.unknown()).nullable().openapi({ description: "what approving it did, e.g. the ledger transfer" }),
  })
  .openapi("Proposal");

export const proposalOut = (p: Proposal) => ({
  id: p.id,
  kind: p.kind,
  marketplace_id: p.marketplaceId,
  payload: p.payload,
  status: p.status,
  proposed_by: p.proposedBy,
  proposed_at: p.proposedAt.toISOString(),
  decided_by: p.decidedBy,
  decided_at: p.decidedAt?.toISOString() ?? null,
  reason: p.reason,
  result: p.result,
});
