import cluster from "node:cluster";
import type { Server } from "node:http";
import { onStopSignal, processLogger, processPlan, superviseProcesses } from "./cluster.js";
import { exitOnSettingsConflicts } from "./services/chain-settings.js";
import { serve } from "@hono/node-server";
import { resolveAdminKey } from "./admin-key.js";
import { Settlements } from "./chain/settlement.js";
import { loadChainsOrExit, loadConfig } from "./config.js";
import { openConfiguredDatabase } from "./db/open.js";
import { openConfiguredReplica } from "./db/replica.js";
import { createApp } from "./http/app.js";
import { createMetrics } from "./http/metrics.js";
import { RateLimiter } from "./http/rate-limit.js";
import { createLogger } from "./log.js";
import { closeLedgerContext, createLedgerContext } from "./services/context.js";
import { startWorkers } from "./workers/start.js";
import { resolveWebhookKey } from "./webhook-key.js";

const config = loadConfig();
const plan = processPlan(config);
// With API_PROCESSES / WORKER_PROCESSES this process only supervises the ones it forks (src/cluster.ts).
if (cluster.isPrimary && plan) process.exit(await superviseProcesses(config, plan, createLogger(config.LOG_LEVEL)));
const log = processLogger(createLogger(config.LOG_LEVEL), "api", config);
if (config.CLOCK_START)
  log.warn({ clock_start: config.CLOCK_START }, "CLOCK_START is set: the service's clock started at that instant, not at the machine's time");
const settlements = new Settlements(loadChainsOrExit(config));
const db = await openConfiguredDatabase(config);
await exitOnSettingsConflicts(db, settlements);
const ledger = createLedgerContext(db, {
  maxItems: config.GROUP_COMMIT_MAX_ITEMS,
  maxConcurrent: config.GROUP_COMMIT_MAX_CONCURRENT,
  usageMaxConcurrent: config.USAGE_COMMIT_MAX_CONCURRENT,
  windowMs: config.GROUP_COMMIT_WINDOW_MS,
});
ledger.reads = await openConfiguredReplica(config, db, log);
const stopWorkers = config.RUN_WORKERS === "true" ? startWorkers(db, config, log, settlements) : async () => {};
const adminKey = resolveAdminKey(config);
const rateLimiter = new RateLimiter(config.RATE_LIMIT_PER_SECOND, config.RATE_LIMIT_BURST);
const metrics = createMetrics(db);
const webhooks = { secretsKey: resolveWebhookKey(config), allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE === "true" };
const deps = { ledger, settlements, rateLimiter, config: { ...config, ADMIN_API_KEY: adminKey.key }, log, metrics, webhooks };
// With MANAGEMENT_PORT, two listeners: the public one for tenants, the management one (loopback
// by default) for platform keys, metrics and docs. Without it, one listener serves both.
const separate = config.MANAGEMENT_PORT !== undefined;
const app = createApp({ ...deps, surface: separate ? "public" : "all" });
const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
  log.info(
    {
      address: info.address,
      port: info.port,
      database: config.DATABASE_URL ? "postgres" : `pglite:${config.PGLITE_DATA_DIR}`,
      admin_key_from: adminKey.source,
      chains: settlements.chains.map((c) => c.settings.name),
      workers: config.RUN_WORKERS === "true",
      surface: separate ? "public" : "all",
      ...(config.CLOCK_START ? { clock_start: config.CLOCK_START } : {}),
    },
    `listening on http://${info.address}:${info.port}`,
  );
}) as Server;
exitOnListenError(server, "PORT", config.HOST, config.PORT);
const servers: Server[] = [server];
if (separate) {
  const management = createApp({ ...deps, surface: "management" });
  servers.push(
    serve({ fetch: management.fetch, port: config.MANAGEMENT_PORT!, hostname: config.MANAGEMENT_HOST }, (info) => {
      log.info({ address: info.address, port: info.port, surface: "management" }, `management listening on http://${info.address}:${info.port}`);
    }) as Server,
  );
  exitOnListenError(servers[1]!, "MANAGEMENT_PORT", config.MANAGEMENT_HOST, config.MANAGEMENT_PORT!);
} else if (config.HOST !== "127.0.0.1" && config.HOST !== "::1" && config.HOST !== "localhost") {
  log.warn(
    { host: config.HOST },
    "one listener serves the public API and the management surface (platform keys, /metrics, /docs) on a non-loopback interface: set MANAGEMENT_PORT to keep the management surface apart",
  );
}

/** A listener that cannot start ends the process with one line saying why and what to change (not Node's stack trace). */
function exitOnListenError(s: Server, setting: string, host: string, port: number) {
  s.once("error", (err: NodeJS.ErrnoException) => {
    const why =
      err.code === "EADDRINUSE"
        ? `port ${port} on ${host} is already in use (another instance of the service, or another program): stop it, or set ${setting} to a free port`
        : err.code === "EACCES"
          ? `no permission to listen on ${host}:${port} (ports below 1024 need privileges): set ${setting} to another port`
          : err.code === "EADDRNOTAVAIL"
            ? `${host} is not an address of this machine: set the listener's host to one of its addresses`
            : `${err.code ?? "error"}: ${err.message}`;
    log.fatal({ code: err.code, host, port }, `cannot listen: ${why}`);
    process.exit(1);
  });
}

// An idle keep-alive connection is closed by the client or the load balancer in front, not by the
// service: when the server closes it (Node's default is 5 s), a client that sends on it at that
// moment gets "other side closed" for a request that never arrived. Headers must time out later.
// A body is read only once its request is let through (for a usage batch, after it waited for
// admission, which may take minutes) and then has BODY_READ_TIMEOUT_MS to arrive: Node's own limit
// on a whole request (5 minutes, counted from its first byte, the wait included) is off.
for (const s of servers) {
  s.keepAliveTimeout = config.HTTP_KEEP_ALIVE_MS;
  s.headersTimeout = config.HTTP_KEEP_ALIVE_MS + 1_000;
  s.requestTimeout = 0;
}

let stopping = false;
/** Stop accepting, let requests in flight finish, flush the group committer, stop workers, close the pool. */
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "shutting down");
  const closed = Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  for (const s of servers) s.closeIdleConnections();
  const forced = setTimeout(() => {
    for (const s of servers) s.closeAllConnections();
  }, 10_000);
  await closed;
  clearTimeout(forced);
  await closeLedgerContext(ledger);
  await stopWorkers();
  await ledger.reads?.close();
  await db.close();
  log.info("stopped");
  process.exit(0);
}
onStopSignal((signal) => void shutdown(signal));
