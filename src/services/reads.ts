/**
 * The read side the API serves: the repositories' reads (db/queries/) that routes may call, each
 * a single statement or a report with no rule to add on the way, so they are exposed as they are
 * rather than wrapped. Routes reach the database only through services/ (checked by
 * `npm run lint:deps`); who may see what is decided by the access rules of domain/access.ts.
 */
export { decodeCursor, getAccount, getAccounts, getBalance, getBalanceAsOf, listAccounts, listEntries } from "../db/queries/accounts.js";
export { decodeTransferCursor, getTransfer, listTransfers } from "../db/queries/transfers.js";
export { getUsage, listUsage } from "../db/queries/usage.js";
export { getAssetByCode, getAssetScales, listAssets } from "../db/queries/assets.js";
export { listApiKeys } from "../db/queries/api-keys.js";
export { feeRevenue, feeRevenueBalances, operatorStatements, payoutsConfirmed, trialBalance, trialBalanceWindow } from "../db/queries/reports.js";
export {
  decodeStatementCursor,
  encodeStatementCursor,
  isStatementEntry,
  operatorBalances,
  operatorEarnings,
  operatorOpeningBalances,
  operatorStatement,
  type StatementRow,
} from "../db/queries/operator-views.js";
export { listAuditLog } from "../db/queries/audit-log.js";
export { listDepositAddressRows as listDepositAddresses } from "../db/queries/deposits.js";
