import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { createApiKey } from "../../services/api-keys.js";
import { requireRole } from "../auth.js";
import { jsonBodyGuard } from "../json-body.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { apiKeyOut } from "../serialize.js";
import { ApiKey } from "./api-key-schema.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";

const Body = z
  .strictObject({
    name: z.string().openapi({ example: "marketplace m1 ingest" }),
    role: z.enum(["admin", "finance", "marketplace", "operator"]),
    scope_id: z
      .string()
      .optional()
      .openapi({ description: "the marketplace or operator id the key acts for (marketplace and operator keys only)", example: "m1" }),
  })
  .openapi("ApiKeyCreate");

const Created = ApiKey.extend({
  secret: z.string().nullable().openapi({ description: "the key itself; shown in this response only (null when the response is replayed)" }),
}).openapi("ApiKeyCreated");

const route = createRoute({
  method: "post",
  path: "/v1/api-keys",
  operationId: "createApiKey",
  tags: ["api keys"],
  summary: "Create an API key (admin)",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: { headers: IdempotencyHeader, body: jsonBody(Body) },
  responses: { 201: json(Created, "created; the secret is shown once"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid("json");
    return idempotently(c, body, async (tx) => {
      const key = await createApiKey(tx, { name: body.name, role: body.role, scopeId: body.scope_id, createdBy: c.get("principal").keyId });
      const out = apiKeyOut(key);
      // The secret never reaches the database: a replay answers with secret null.
      return { status: 201, body: { ...out, secret: key.secret }, stored: { ...out, secret: null } };
    }) as never;
  });
}
