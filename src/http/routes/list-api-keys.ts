import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { listApiKeys } from "../../services/reads.js";
import { isUuid } from "../../domain/ids.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { CursorQuery, page, pageOf } from "../schemas.js";
import { apiKeyOut } from "../serialize.js";
import { actorRef, ApiKey } from "./api-key-schema.js";
import { errorResponses, json, security } from "./common.js";

const route = createRoute({
  method: "get",
  path: "/v1/api-keys",
  operationId: "listApiKeys",
  tags: ["api keys"],
  summary: "List API keys (admin), with the key that created each; secrets are never shown",
  security,
  middleware: [requireRole("admin")] as const,
  request: {
    query: CursorQuery.extend({
      created_by: actorRef()
        .optional()
        .openapi({ description: "only the keys this key created: a key's id, or `bootstrap-admin` (the key from ADMIN_API_KEY)" }),
    }),
  },
  responses: { 200: json(page(ApiKey, "ApiKeyPage"), "a page of keys"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { cursor, limit, created_by: createdBy } = c.req.valid("query");
    if (cursor !== undefined && !isUuid(cursor))
      throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
    const keys = await listApiKeys(c.get("deps").ledger.db, { cursor, limit: limit + 1, createdBy });
    return c.json(
      pageOf(keys, limit, apiKeyOut, (r) => r.id),
      200,
    );
  });
}
