export { assets } from "./assets.js";
export { assetSettlements } from "./asset-settlements.js";
export { accounts } from "./accounts.js";
export { accountBalances } from "./account-balances.js";
export { transfers } from "./transfers.js";
export { entries } from "./entries.js";
export { journalSeals } from "./journal-seals.js";
export { apiKeys } from "./api-keys.js";
export { httpIdempotency } from "./http-idempotency.js";
export { marketplaces, operators, marketplaceOperators, operatorInvitations } from "./marketplaces.js";
export { customers } from "./customers.js";
export { feeSchedules } from "./fee-schedules.js";
export { usageRecords, operatorEarned, usageFundingMarks, usageFundingMarkCustomers } from "./usage-records.js";
export { holds } from "./holds.js";
export { payoutPolicies, operatorPayoutLimits } from "./payout-policies.js";
export { payoutAddressChallenges, payoutAddresses, payoutAddressEvents } from "./payout-addresses.js";
export { chainSenders, chainTransactions, chainTxAttempts } from "./chain-transactions.js";
export { payouts, payoutEvents } from "./payouts.js";
export {
  reconciliations,
  reconciliationItems,
  depositAddresses,
  chainDeposits,
  auditLog,
  chainCursors,
  receiptRechecks,
  receiptNamedDeposits,
} from "./reconciliations.js";
export { usageLimits } from "./usage-limits.js";
export { proposals, fundsReceipts, marketplaceCreditLimits, customerDebitTotals } from "./funding.js";
export { deployment } from "./deployment.js";
export { rates, payoutPreferences, conversions } from "./conversions.js";
export { rateLockQueue, rateLocks } from "./rate-locks.js";
export { accountingPeriods } from "./periods.js";
export { disputes, disputeItems, disputeEvents, marketplaceDisputeSettings } from "./disputes.js";
export { webhookEndpoints, webhookDeliveries } from "./webhooks.js";
export { operatorCapacity, capacityPolicies, usageCapacityFlags, operatorCosts } from "./operator-capacity.js";
export { events, eventRelay } from "./events.js";
export { balanceMonitors } from "./balance-monitors.js";
export { usageBatches, usageBatchRejections } from "./usage-batches.js";
