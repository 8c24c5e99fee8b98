import { OpenAPIHono } from "@hono/zod-openapi";
import { requireApiKey } from "./auth.js";
import { registerConsole } from "./console/routes.js";
import { registerDocs } from "./docs.js";
import { auditLog } from "./middleware/audit.js";
import { bodyLimits } from "./middleware/body-limit.js";
import { batchAdmission } from "./batch-admission.js";
import { errorHandler, notFound } from "./middleware/error-handler.js";
import { invalidRequest } from "./middleware/invalid-request.js";
import { refuseNulInUrl } from "./middleware/nul-in-url.js";
import { ledgerPosition } from "./read-source.js";
import { hideManagementSurface } from "./middleware/public-listener.js";
import { registerProblemPages } from "./problems/page.js";
import { rateLimit } from "./middleware/rate-limit.js";
import { requestLog } from "./middleware/request-log.js";
import { refuseUnknownQueryParameters } from "./middleware/unknown-query.js";
import type { AppDeps, AppEnv } from "./request-context.js";
import { registerRoutes } from "./routes/index.js";
import { USAGE_BATCH_ROLES } from "./routes/create-usage-batch.js";

/**
 * The HTTP API: what a request goes through, in order, then every route, the OpenAPI document,
 * the docs page and the page of each problem type (/problems). Each route then checks the role,
 * the body (json-body.ts) and its zod schemas (refusals answered by `invalidRequest`).
 */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: invalidRequest });
  app.use("*", requestLog(deps));
  if (deps.surface === "public") app.use("*", hideManagementSurface);
  app.use("*", refuseNulInUrl);
  app.use("/v1/*", refuseUnknownQueryParameters(app));
  app.use("/v1/*", auditLog(deps));
  app.use("*", bodyLimits(deps.config));
  app.use("/v1/*", requireApiKey);
  app.use("/v1/*", rateLimit);
  app.use("/v1/*", ledgerPosition);
  app.use("/v1/usage/batch", batchAdmission(deps.config, USAGE_BATCH_ROLES));

  registerRoutes(app);
  registerDocs(app);
  registerProblemPages(app);
  registerConsole(app, deps.surface ?? "all", () => deps.ledger.db.clock.now());

  app.notFound(notFound(app));
  app.onError(errorHandler(deps));
  return app;
}
