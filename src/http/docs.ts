import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { registerProblemExamples } from "./problems/openapi.js";
import type { AppEnv } from "./request-context.js";
import { errorResponses } from "./routes/common.js";

// The package's folder, found without loading its entry point (which evaluates the 1.4 MB browser
// bundle on every start).
const assets = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const file = (name: string) => readFileSync(join(assets, name));

const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Settlement ledger API</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="api"></div><script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body>
</html>`;

/** The OpenAPI 3.1 document and a docs page whose assets are served from the package, not a CDN. */
export function registerDocs(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "apiKey", { type: "http", scheme: "bearer", description: "Authorization: Bearer <api key>" });
  registerProblemExamples(app, Object.keys(errorResponses).map(Number));
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Settlement & payout ledger",
      version: "1.0.0",
      description:
        "Amounts are strings of integers in the asset's smallest unit. Every POST needs an Idempotency-Key header. Errors are application/problem+json (RFC 9457): " +
        "each problem's `type`, /problems/<code>, is a page saying what it means and what to do (GET /problems lists them all).",
      license: { name: "Proprietary" },
    },
    // Relative: the API is served from the same origin as this document, whatever host, port or listener that is.
    servers: [{ url: "/", description: "the origin serving this document" }],
  });
  const css = file("swagger-ui.css");
  const js = file("swagger-ui-bundle.js");
  app.get("/docs", (c) => c.html(page));
  app.get("/docs/swagger-ui.css", (c) => c.body(css, 200, { "content-type": "text/css", "cache-control": "public, max-age=86400" }));
  app.get("/docs/swagger-ui-bundle.js", (c) => c.body(js, 200, { "content-type": "text/javascript", "cache-control": "public, max-age=86400" }));
  app.get("/docs/init.js", (c) =>
    c.body(`window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#api", validatorUrl: null });`, 200, { "content-type": "text/javascript" }),
  );
}
