import type { Settlements } from "../chain/settlement.js";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import type { LedgerContext } from "../services/context.js";
import type { Principal } from "../domain/access.js";
import type { WebhookSettings } from "../services/webhook-endpoints.js";
import type { Metrics } from "./metrics.js";
import type { RateLimiter } from "./rate-limit.js";

/** What the HTTP layer is built from. */
export interface AppDeps {
  ledger: LedgerContext;
  /** How each asset's payouts settle (the configured chains). */
  settlements: Settlements;
  config: Pick<Config, "ADMIN_API_KEY" | "MAX_BODY_BYTES" | "MAX_BATCH_BODY_BYTES" | "BODY_READ_TIMEOUT_MS"> &
    Partial<Pick<Config, "BATCH_BODIES_IN_FLIGHT_BYTES">>;
  log: Logger;
  metrics: Metrics;
  /** Webhook endpoints' settings (the key sealing their secrets; private addresses allowed); without it the webhook routes answer 503. */
  webhooks?: WebhookSettings;
  /** Requests per API key; none: unlimited. */
  rateLimiter?: RateLimiter;
  /**
   * What this listener serves (docs/operations.md, "Listeners"): `public`: the tenants' API
   * (marketplace and operator keys) and /healthz, /readyz; `management`: everything, platform keys
   * (admin, finance), /metrics and /docs included; `all` (one listener, the default): both.
   */
  surface?: "all" | "public" | "management";
}

export interface AppEnv {
  Variables: {
    requestId: string;
    /** The X-Request-Id the client sent (printable, at most 100 characters), kept beside the service's own. */
    clientRequestId: string | null;
    principal: Principal;
    deps: AppDeps;
    /** The request's audit row was written in the transaction of the change it made. */
    audited?: boolean;
  };
}
