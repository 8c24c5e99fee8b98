import type { Settlements } from "../chain/settlement.js";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import type { LedgerContext } from "../services/context.js";
import type { Principal } from "../services/principal.js";
import type { Metrics } from "./metrics.js";
import type { RateLimiter } from "./rate-limit.js";

/** What the HTTP layer is built from. */
export interface AppDeps {
  ledger: LedgerContext;
  /** How each asset's payouts settle (the configured chains). */
  settlements: Settlements;
  config: Pick<Config, "ADMIN_API_KEY" | "MAX_BODY_BYTES" | "MAX_BATCH_BODY_BYTES">;
  log: Logger;
  metrics: Metrics;
  /** Requests per API key; none: unlimited. */
  rateLimiter?: RateLimiter;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    principal: Principal;
    deps: AppDeps;
  };
}
