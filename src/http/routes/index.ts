import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../request-context.js";
import * as createAccount from "./create-account.js";
import * as createApiKey from "./create-api-key.js";
import * as createAsset from "./create-asset.js";
import * as getAsset from "./get-asset.js";
import * as updateAsset from "./update-asset.js";
import * as setAssetRateBounds from "./set-asset-rate-bounds.js";
import * as retireAsset from "./retire-asset.js";
import * as updateMarketplace from "./update-marketplace.js";
import * as updateOperator from "./update-operator.js";
import * as updateCustomer from "./update-customer.js";
import * as retireCustomer from "./retire-customer.js";
import * as closeHold from "./close-hold.js";
import * as createCustomer from "./create-customer.js";
import * as getHold from "./get-hold.js";
import * as listHolds from "./list-holds.js";
import * as openHold from "./open-hold.js";
import * as operatorBalances from "./operator-balances.js";
import * as operatorEarnings from "./operator-earnings.js";
import * as operatorStatement from "./operator-statement.js";
import * as reverseUsage from "./reverse-usage.js";
import * as openDispute from "./open-dispute.js";
import * as listDisputes from "./list-disputes.js";
import * as decideDispute from "./decide-dispute.js";
import * as disputeSettings from "./dispute-settings.js";
import * as operatorCapacity from "./operator-capacity.js";
import * as operatorCosts from "./operator-costs.js";
import * as operatorFleet from "./operator-fleet.js";
import * as operatorMargin from "./operator-margin.js";
import * as operatorScenarios from "./operator-scenarios.js";
import * as capacityPolicy from "./capacity-policy.js";
import * as listCapacityFlags from "./list-capacity-flags.js";
import * as reportOperatorReceivables from "./report-operator-receivables.js";
import * as createDeposit from "./create-deposit.js";
import * as createMarketplace from "./create-marketplace.js";
import * as createTransfer from "./create-transfer.js";
import * as createUsage from "./create-usage.js";
import * as createUsageBatch from "./create-usage-batch.js";
import * as getUsage from "./get-usage.js";
import * as usageBatches from "./usage-batches.js";
import * as listFeeSchedules from "./list-fee-schedules.js";
import * as listUsage from "./list-usage.js";
import * as publishFeeSchedule from "./publish-fee-schedule.js";
import * as registerOperator from "./register-operator.js";
import * as getAccount from "./get-account.js";
import * as getBalance from "./get-balance.js";
import * as getTransfer from "./get-transfer.js";
import * as listAccounts from "./list-accounts.js";
import * as listTransfers from "./list-transfers.js";
import * as health from "./health.js";
import * as listApiKeys from "./list-api-keys.js";
import * as listAssets from "./list-assets.js";
import * as listEntries from "./list-entries.js";
import * as postPending from "./post-pending.js";
import * as reverseTransfer from "./reverse-transfer.js";
import * as voidPending from "./void-pending.js";
import * as revokeApiKey from "./revoke-api-key.js";
import * as cancelPayout from "./cancel-payout.js";
import * as createAddressChallenge from "./create-address-challenge.js";
import * as createPayout from "./create-payout.js";
import * as getPayout from "./get-payout.js";
import * as listPayoutAddresses from "./list-payout-addresses.js";
import * as listPayoutPolicies from "./list-payout-policies.js";
import * as listPayouts from "./list-payouts.js";
import * as markPayoutPaid from "./mark-payout-paid.js";
import * as setPayoutAddress from "./set-payout-address.js";
import * as setPayoutPolicy from "./set-payout-policy.js";
import * as auditVerify from "./audit-verify.js";
import * as createReconciliation from "./create-reconciliation.js";
import * as getReconciliation from "./get-reconciliation.js";
import * as listAuditLog from "./list-audit-log.js";
import * as registerDepositAddress from "./register-deposit-address.js";
import * as listDepositAddresses from "./list-deposit-addresses.js";
import * as reportFeeRevenue from "./report-fee-revenue.js";
import * as reportConversions from "./report-conversions.js";
import * as reportOperatorStatements from "./report-operator-statements.js";
import * as reportPayouts from "./report-payouts.js";
import * as reportTrialBalance from "./report-trial-balance.js";
import * as resolveReconciliationItem from "./resolve-reconciliation-item.js";
import * as treasuryCheck from "./treasury-check.js";
import * as getUsageLimits from "./get-usage-limits.js";
import * as setUsageLimits from "./set-usage-limits.js";
import * as createReceipt from "./create-receipt.js";
import * as setCreditLimit from "./set-credit-limit.js";
import * as getMarketplaceFunding from "./get-marketplace-funding.js";
import * as listProposals from "./list-proposals.js";
import * as decideProposal from "./decide-proposal.js";
import * as setCustomerCreditLimit from "./set-customer-credit-limit.js";
import * as setOperatorPayoutLimits from "./set-operator-payout-limits.js";
import * as getOperatorPayoutLimits from "./get-operator-payout-limits.js";
import * as operatorInvitations from "./operator-invitations.js";
import * as listMarketplaces from "./list-marketplaces.js";
import * as getMarketplace from "./get-marketplace.js";
import * as listOperators from "./list-operators.js";
import * as getOperator from "./get-operator.js";
import * as listCustomers from "./list-customers.js";
import * as getCustomer from "./get-customer.js";
import * as customerBalance from "./customer-balance.js";
import * as customerStatement from "./customer-statement.js";
import * as listReconciliations from "./list-reconciliations.js";
import * as setMarketplacePricing from "./set-marketplace-pricing.js";
import * as setPayoutPreference from "./set-payout-preference.js";
import * as getPayoutPreference from "./get-payout-preference.js";
import * as createRate from "./create-rate.js";
import * as listRates from "./list-rates.js";
import * as listConversions from "./list-conversions.js";
import * as listRateLocks from "./list-rate-locks.js";
import * as periods from "./periods.js";
import * as webhookEndpoints from "./webhook-endpoints.js";
import * as webhookEndpoint from "./webhook-endpoint.js";
import * as webhookDeliveries from "./webhook-deliveries.js";
import * as listEvents from "./list-events.js";
import * as balanceMonitors from "./balance-monitors.js";

/** Every route of the API, in the order the OpenAPI document lists them. */
const routes = [
  createApiKey,
  listApiKeys,
  revokeApiKey,
  createAsset,
  listAssets,
  getAsset,
  updateAsset,
  setAssetRateBounds,
  retireAsset,
  createAccount,
  listAccounts,
  getAccount,
  getBalance,
  listEntries,
  createTransfer,
  listTransfers,
  getTransfer,
  postPending,
  voidPending,
  reverseTransfer,
  createMarketplace,
  listMarketplaces,
  getMarketplace,
  updateMarketplace,
  setMarketplacePricing,
  publishFeeSchedule,
  listFeeSchedules,
  getUsageLimits,
  setUsageLimits,
  capacityPolicy,
  listCapacityFlags,
  registerOperator,
  listOperators,
  getOperator,
  updateOperator,
  createCustomer,
  listCustomers,
  getCustomer,
  customerBalance,
  customerStatement,
  updateCustomer,
  retireCustomer,
  setCustomerCreditLimit,
  createDeposit,
  createUsage,
  createUsageBatch,
  // Before GET /v1/usage/{id}: "batches" is not a record id.
  usageBatches,
  getUsage,
  listUsage,
  reverseUsage,
  openDispute,
  listDisputes,
  decideDispute,
  disputeSettings,
  openHold,
  listHolds,
  getHold,
  closeHold,
  operatorBalances,
  operatorStatement,
  operatorEarnings,
  operatorCapacity,
  operatorCosts,
  operatorFleet,
  operatorMargin,
  operatorScenarios,
  operatorInvitations,
  createAddressChallenge,
  setPayoutAddress,
  listPayoutAddresses,
  createPayout,
  listPayouts,
  getPayout,
  cancelPayout,
  markPayoutPaid,
  setPayoutPolicy,
  listPayoutPolicies,
  setOperatorPayoutLimits,
  getOperatorPayoutLimits,
  setPayoutPreference,
  getPayoutPreference,
  createRate,
  listRates,
  listConversions,
  listRateLocks,
  periods,
  registerDepositAddress,
  listDepositAddresses,
  createReconciliation,
  listReconciliations,
  getReconciliation,
  resolveReconciliationItem,
  treasuryCheck,
  reportTrialBalance,
  reportFeeRevenue,
  reportConversions,
  reportPayouts,
  reportOperatorStatements,
  reportOperatorReceivables,
  auditVerify,
  listAuditLog,
  createReceipt,
  setCreditLimit,
  getMarketplaceFunding,
  listProposals,
  decideProposal,
  listEvents,
  balanceMonitors,
  webhookEndpoints,
  webhookEndpoint,
  webhookDeliveries,
];

/** Registers every route (everything under /v1 behind the API key and rate limit of createApp). */
export function registerRoutes(app: OpenAPIHono<AppEnv>): void {
  health.register(app);
  for (const route of routes) route.register(app);
}
