import { z } from "zod";
import { loadChains, type ChainSettings } from "./chain/config.js";
import { clockStartingAt, systemClock, type Clock } from "./domain/clock.js";
import { faultPoints } from "./domain/payouts.js";

const intFrom = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def);

/** The whole environment of the service, parsed once at start. Nothing else reads process.env. */
export const Config = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional()
    .describe("PostgreSQL server; when unset the embedded PGlite database is used"),
  PGLITE_DATA_DIR: z.string().min(1).default("./data/pglite").describe("folder of the embedded database ('memory://' for none)"),
  DB_POOL_SIZE: intFrom(10, 1, 200),
  DB_READ_POOL_SIZE: intFrom(4, 0, 200).describe(
    "connections for balance reads, read-only and with generic plans allowed (docs/performance.md); 0: they share DB_POOL_SIZE",
  ),
  DATABASE_REPLICA_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional()
    .describe(
      "a streaming replica of DATABASE_URL: balance reads, statements, earnings and reports are answered from it when it is fresh enough (docs/scaling.md)",
    ),
  REPLICA_MAX_LAG_MS: intFrom(1000, 10, 600_000).describe("reads without Ledger-Min-Position go to the replica only while it is at most this far behind"),
  REPLICA_WAIT_MS: intFrom(200, 0, 10_000).describe("how long a read with Ledger-Min-Position waits for the replica to replay it before asking the primary"),
  REPLICA_WRITE_POSITIONS: z
    .enum(["true", "false"])
    .default("true")
    .describe("with a replica: writes answer Ledger-Position (one shared query to the primary after their commit); false saves that wait"),
  DATABASE_POOLER: z
    .enum(["none", "transaction"])
    .default("none")
    .describe(
      "'transaction' when DATABASE_URL points at a connection pooler in transaction mode (PgBouncer pool_mode=transaction): statements are sent unnamed, with no session startup parameters",
    ),
  PORT: intFrom(8080, 0, 65535),
  HOST: z.string().min(1).default("127.0.0.1").describe("interface to listen on; 0.0.0.0 for all"),
  MANAGEMENT_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .describe("a second listener for the management surface (platform keys, /metrics, /docs); the public one then serves tenants only"),
  MANAGEMENT_HOST: z.string().min(1).default("127.0.0.1").describe("interface of the management listener (loopback unless you mean it)"),
  HTTP_KEEP_ALIVE_MS: intFrom(65_000, 1_000, 290_000).describe(
    "how long a listener keeps an idle keep-alive connection open; longer than clients and load balancers keep theirs, so that the service never closes a connection a client is reusing",
  ),
  ADMIN_API_KEY: z
    .string()
    .min(24, "must be at least 24 characters (use a long random string)")
    .optional()
    .describe("bootstrap admin key; create further keys with POST /v1/api-keys"),
  ADMIN_API_KEY_FILE: z
    .string()
    .min(1)
    .default("./data/admin-api-key")
    .describe("when ADMIN_API_KEY is unset: read the bootstrap admin key from this file, creating it with a random key if missing"),
  MAX_BODY_BYTES: intFrom(1_048_576, 1024, 64 * 1_048_576),
  MAX_BATCH_BODY_BYTES: intFrom(16 * 1_048_576, 1024, 256 * 1_048_576).describe("largest body of POST /v1/usage/batch"),
  BODY_READ_TIMEOUT_MS: intFrom(60_000, 1_000, 600_000).describe(
    "how long a request's body may take to arrive once the service reads it (after the key, the role and a batch's admission); slower is answered 408 and the connection closed",
  ),
  BATCH_BODIES_IN_FLIGHT_BYTES: intFrom(16 * 1_048_576, 1024, 4096 * 1_048_576).describe(
    "usage batches a process handles at once, by the sum of their bodies' sizes; more wait their turn (a batch alone always passes)",
  ),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  GROUP_COMMIT_MAX_ITEMS: intFrom(1000, 1, 10000),
  GROUP_COMMIT_MAX_CONCURRENT: intFrom(4, 1, 64),
  USAGE_COMMIT_MAX_CONCURRENT: intFrom(2, 1, 64).describe(
    "single usage records' batches in flight at once: each locks the protocol's and its marketplace's fee accounts at its end, so more only queue there (docs/performance.md)",
  ),
  GROUP_COMMIT_WINDOW_MS: intFrom(0, 0, 1000),
  HOLD_EXPIRY_INTERVAL_MS: intFrom(1000, 50, 3_600_000),
  JOURNAL_SEAL_INTERVAL_MS: intFrom(5000, 50, 3_600_000),
  EVENT_RELAY_INTERVAL_MS: intFrom(500, 20, 3_600_000).describe("how often the event relay appends the events of finished transactions"),
  RATE_LIMIT_PER_SECOND: intFrom(1000, 0, 1_000_000).describe("requests a second per API key (per process), 0: unlimited"),
  RATE_LIMIT_BURST: intFrom(2000, 1, 10_000_000).describe("requests an API key may send at once above its rate"),
  CHAINS: z.string().optional().describe("the chains payouts settle on, as JSON (docs/payouts.md); overrides CHAINS_FILE"),
  CHAINS_FILE: z.string().min(1).optional().describe("file holding the chains' JSON"),
  PAYOUT_INTERVAL_MS: intFrom(2000, 50, 3_600_000).describe("how often the payout worker runs its steps"),
  WEBHOOK_INTERVAL_MS: intFrom(1000, 20, 3_600_000).describe("how often the webhook worker looks for events to deliver"),
  WEBHOOK_TIMEOUT_MS: intFrom(10_000, 100, 60_000).describe("a webhook receiver that has not answered in this long has failed the attempt"),
  WEBHOOK_CONCURRENCY: intFrom(8, 1, 256).describe("endpoints one worker process delivers to at once"),
  WEBHOOK_LEASE_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(3_600_000)
    .optional()
    .describe(
      "how long a worker's claim on an endpoint lasts unless renewed (a killed worker's endpoints wait this long); more than WEBHOOK_TIMEOUT_MS; default three times it, at least 60 s",
    ),
  WEBHOOKS_ALLOW_PRIVATE: z
    .enum(["true", "false"])
    .default("false")
    .describe("deliver webhooks to private, loopback and link-local addresses too (tests, or a deployment inside its own network)"),
  WEBHOOK_SECRETS_KEY: z
    .string()
    .regex(/^[A-Za-z0-9+/]{43}=$/, "must be 32 bytes in base64 (openssl rand -base64 32)")
    .optional()
    .describe("key (32 bytes, base64) that encrypts webhook signing secrets at rest; the same for every process of one database"),
  WEBHOOK_SECRETS_KEY_FILE: z
    .string()
    .min(1)
    .default("./data/webhook-secrets-key")
    .describe("when WEBHOOK_SECRETS_KEY is unset: read that key from this file, creating it with a random key if missing"),
  RUN_WORKERS: z.enum(["true", "false"]).default("true").describe("run the background workers inside the API process"),
  API_PROCESSES: intFrom(1, 1, 64).describe("API processes sharing PORT (and MANAGEMENT_PORT), forked by one supervising process; PostgreSQL only above 1"),
  WORKER_PROCESSES: z.coerce
    .number()
    .int()
    .min(0)
    .max(16)
    .optional()
    .describe("background worker processes beside the API processes; default 1 when API_PROCESSES is above 1 (0 with RUN_WORKERS=false)"),
  READ_PROCESSES: intFrom(0, 0, 64).describe("API processes that listen on READ_PORT instead of PORT: reads sent there do not wait behind ingest"),
  READ_PORT: intFrom(8081, 1, 65535).describe("the port of the READ_PROCESSES (the same API as PORT)"),
  CLOCK_START: z
    .string()
    .optional()
    .refine(
      (v) =>
        v === undefined ||
        (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/.test(v) &&
          !Number.isNaN(Date.parse(v)) &&
          new Date(v).toISOString().slice(0, 19) === v.slice(0, 19)),
      "must be an instant in UTC such as 2027-12-31T23:59:59Z",
    )
    .describe("testing and rehearsal only: the service's clock starts at this instant when the process starts and runs on in real time"),
  FAULT_KILL_AT: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || v.split(",").every((p) => (faultPoints as readonly string[]).includes(p)),
      `must be a comma-separated list of ${faultPoints.join(", ")}`,
    )
    .describe("testing only: the payout worker kills its own process (SIGKILL) at these points"),
});
export type Config = z.infer<typeof Config>;

/** The clock of CLOCK_START, or the machine's. */
export function configuredClock(config: Pick<Config, "CLOCK_START">): Clock {
  return config.CLOCK_START === undefined ? systemClock : clockStartingAt(new Date(config.CLOCK_START));
}

/** Parses the environment; on failure prints each bad variable and exits 1. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Config.safeParse(env);
  if (parsed.success) return parsed.data;
  console.error("Invalid configuration:");
  for (const issue of parsed.error.issues) console.error(`  ${issue.path.join(".")}: ${issue.message}`);
  process.exit(1);
}

/** The chains of CHAINS / CHAINS_FILE with their signer keys resolved; on failure prints why and exits 1. */
export function loadChainsOrExit(config: Config, env: NodeJS.ProcessEnv = process.env): ChainSettings[] {
  try {
    return loadChains(config, env);
  } catch (e) {
    console.error(`Invalid configuration: ${(e as Error).message}`);
    process.exit(1);
  }
}
