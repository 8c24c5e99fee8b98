/**
 * Proposals: four eyes for manual money (docs/ledger.md, "Four eyes"), one file per use case.
 * The names other files import, also importable from src/services/proposals.ts.
 */
export {
  PROPOSAL_KINDS,
  PROPOSAL_ROLES,
  getProposal,
  listProposals,
  proposalConcerns,
  type Proposal,
  type ProposalKind,
  type ProposalParty,
  type ProposalStatus,
} from "./proposal.js";
export { BOOTSTRAP_KEY } from "./decision.js";
export { proposeReceipt, type ReceiptInput } from "./propose-receipt.js";
export { proposeCreditLimit } from "./propose-credit-limit.js";
export { proposeCustomerCreditLimit } from "./propose-customer-credit-limit.js";
export { proposeOperatorPayoutLimits } from "./propose-operator-payout-limits.js";
export { proposePayoutPolicy } from "./propose-payout-policy.js";
export { proposeAssetSettlement, settlementWire } from "./propose-asset-settlement.js";
export { proposeAdjustment, type AdjustmentInput } from "./propose-adjustment.js";
export { proposeUsageLimits, type UsageLimitsChange } from "./propose-usage-limits.js";
export { proposePayoutApproval } from "./propose-payout-approval.js";
export { approveProposal } from "./approve-proposal.js";
export { rejectProposal } from "./reject-proposal.js";
export { proposeRate, type RateInput } from "./propose-rate.js";
export { proposeRateBounds, checkRateBounds, type RateBoundsChange } from "./propose-rate-bounds.js";
export { proposeUsageReversal } from "./propose-usage-reversal.js";
