import type { Role } from "./access.js";

/**
 * Four eyes for manual money (docs/ledger.md, "Four eyes"): the kinds of proposal, their states,
 * and who may propose and who may approve each kind.
 */
export const PROPOSAL_KINDS = [
  "receipt",
  "credit_limit",
  "customer_credit_limit",
  "reconciliation_adjustment",
  "usage_limits",
  "payout",
  "operator_payout_limits",
  "payout_policy",
  "asset_settlement",
  "rate",
  "rate_bounds",
  "period_close",
  "period_reopen",
  "payout_address",
  "usage_reversal",
] as const;
export type ProposalKind = (typeof PROPOSAL_KINDS)[number];

export type ProposalStatus = "proposed" | "approved" | "rejected";

/** Who may propose and who may approve each kind. */
export const PROPOSAL_ROLES: Record<ProposalKind, { propose: Role[]; approve: Role[] }> = {
  receipt: { propose: ["finance", "admin"], approve: ["finance", "admin"] },
  credit_limit: { propose: ["admin"], approve: ["admin", "finance"] },
  /** A marketplace asks for its own customer's; the platform approves. */
  customer_credit_limit: { propose: ["marketplace", "admin"], approve: ["admin", "finance"] },
  operator_payout_limits: { propose: ["admin", "finance"], approve: ["admin", "finance"] },
  payout_policy: { propose: ["admin"], approve: ["admin", "finance"] },
  /** Where an asset's payouts go (its token, its chain): the admin proposes, another key checks the address and approves. */
  asset_settlement: { propose: ["admin"], approve: ["admin", "finance"] },
  reconciliation_adjustment: { propose: ["finance", "admin"], approve: ["finance", "admin"] },
  usage_limits: { propose: ["admin"], approve: ["admin", "finance"] },
  /** A rate finance entered by hand (docs/settlement.md): conversions may use it once another key approves it. */
  rate: { propose: ["finance", "admin"], approve: ["finance", "admin"] },
  /** How old and how far apart the rates of an asset may be for conversions to use them. */
  rate_bounds: { propose: ["admin"], approve: ["admin", "finance"] },
  /** A month's books closed (docs/reconciliation.md, "Month-end close"), and reopened. */
  period_close: { propose: ["finance", "admin"], approve: ["finance", "admin"] },
  period_reopen: { propose: ["finance", "admin"], approve: ["finance", "admin"] },
  /**
   * An operator's payout address set without its current address's agreement, other than a new
   * operator's own first (src/services/payout-addresses.ts): the operator or an admin proposes, another key approves.
   */
  payout_address: { propose: ["operator", "admin"], approve: ["admin", "finance"] },
  /**
   * An admin's reversal of a usage record whose earnings were already paid out: the operator then
   * owes them (a clawback to its receivable, docs/ledger.md "Clawbacks"), as an upheld dispute does.
   */
  usage_reversal: { propose: ["admin"], approve: ["admin", "finance"] },
  /** Proposed by whoever asked for the payout (the operator, finance, the scheduler). */
  payout: { propose: ["operator", "finance", "admin"], approve: ["finance", "admin"] },
};

/** The kinds of proposal that concern one operator (their payload names it as `operator_id`). */
export const OPERATOR_PROPOSAL_KINDS = ["payout_address", "payout", "operator_payout_limits", "usage_reversal"] as const satisfies readonly ProposalKind[];

/** A marketplace or operator key's own party: the proposals about it are the ones it may read. */
export interface ProposalParty {
  role: "marketplace" | "operator";
  id: string;
}

/**
 * Whether a proposal concerns the party (docs/api.md, "One person against everyone"): a
 * marketplace's are those of its marketplace (its customers' credit limits, its receipts, credit
 * limit and usage limits, the closing and reopening of its periods, the reversals of its records
 * that take back paid earnings); an operator's, its payout addresses, its payouts awaiting
 * approval, its payout caps and those reversals of its earnings. The SQL of listProposalRows says the same.
 */
export function proposalConcerns(party: ProposalParty, p: { kind: string; marketplaceId: string | null; payload: Record<string, unknown> }): boolean {
  if (party.role === "marketplace") return p.marketplaceId === party.id;
  return (OPERATOR_PROPOSAL_KINDS as readonly string[]).includes(p.kind) && p.payload.operator_id === party.id;
}
