import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { revokeApiKey } from "../../services/api-keys.js";
import { requireRole } from "../auth.js";
import { jsonBodyGuard } from "../json-body.js";
import type { AppEnv } from "../request-context.js";
import { idempotently } from "../idempotency.js";
import { ApiError } from "../problem.js";
import { LedgerError } from "../../domain/errors.js";
import { IdParam } from "../schemas.js";
import { apiKeyOut } from "../serialize.js";
import { ApiKey } from "./api-key-schema.js";
import { errorResponses, IdempotencyHeader, json, NoBody, security } from "./common.js";

const route = createRoute({
  method: "post",
  path: "/v1/api-keys/{id}/revoke",
  operationId: "revokeApiKey",
  tags: ["api keys"],
  summary: "Revoke an API key at once (admin)",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: { params: IdParam, headers: IdempotencyHeader, body: NoBody },
  responses: { 200: json(ApiKey, "revoked"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    // The revocation holds the revoking key itself, with the revoked one's lock (services/api-keys.ts).
    return idempotently(
      c,
      {},
      async (tx) => {
        const key = await revokeApiKey(tx, { id, at: c.get("deps").ledger.db.clock.now(), by: c.get("principal").keyId }).catch((err: unknown) => {
          if (err instanceof LedgerError && err.code === "invalid_request") throw new ApiError("not_found", `api key ${id} does not exist`);
          throw err;
        });
        return { status: 200, body: apiKeyOut(key) };
      },
      { keyHeldByWrite: true },
    ) as never;
  });
}
