export { assets } from "./assets.js";
export { accounts } from "./accounts.js";
export { accountBalances } from "./account-balances.js";
export { transfers } from "./transfers.js";
export { entries } from "./entries.js";
export { journalSeals } from "./journal-seals.js";
export { apiKeys } from "./api-keys.js";
export { httpIdempotency } from "./http-idempotency.js";
