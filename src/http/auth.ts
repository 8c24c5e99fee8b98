import type { Context, MiddlewareHandler } from "hono";
import { authenticate } from "../services/api-keys.js";
import { withArticle, type Principal, type Role } from "../domain/access.js";
import type { AppEnv } from "./request-context.js";
import { ApiError } from "./problem.js";

/**
 * Resolves `Authorization: Bearer <key>` to the caller; 401 when missing or unknown, 403 for a
 * platform key (admin, finance) on the public listener. The key's rate limit comes next (middleware/rate-limit.ts).
 */
export const requireApiKey: MiddlewareHandler<AppEnv> = async (c, next) => {
  const principal = await keyOfRequest(c);
  if (!principal) throw new ApiError("unauthorized", "the API key is unknown or revoked", [], { "www-authenticate": "Bearer" });
  c.set("principal", principal);
  if (c.get("deps").surface === "public" && (principal.role === "admin" || principal.role === "finance")) {
    throw new ApiError("forbidden", `${withArticle(principal.role)} key is accepted on the management listener only, not on the public one`);
  }
  await next();
};

/** The key of the request's `Authorization` header, if it is known and not revoked (401 when the header is missing or malformed). */
async function keyOfRequest(c: Context<AppEnv>): Promise<Principal | undefined> {
  const header = c.req.header("authorization");
  const token = header?.match(/^Bearer +([\x21-\x7e]{1,200}) *$/i)?.[1];
  if (!token) {
    throw new ApiError("unauthorized", "send an API key as 'Authorization: Bearer <key>'", [], { "www-authenticate": "Bearer" });
  }
  const deps = c.get("deps");
  return authenticate(deps.ledger.db, token, deps.config.ADMIN_API_KEY);
}

/**
 * The request's key checked again (after a wait: a batch waiting for admission), so that a key
 * revoked meanwhile writes nothing: 401, as for a request that arrives after the revocation.
 */
export async function recheckApiKey(c: Context<AppEnv>): Promise<void> {
  const principal = await keyOfRequest(c);
  if (!principal || principal.keyId !== c.get("principal").keyId) {
    throw new ApiError("unauthorized", "the API key was revoked while the request waited", [], { "www-authenticate": "Bearer" });
  }
}

/** 403 unless the caller has one of the roles. */
export function refuseRole(c: Context<AppEnv>, allowed: readonly Role[]): void {
  const { role } = c.get("principal");
  if (!allowed.includes(role)) throw new ApiError("forbidden", `${withArticle(role)} key may not do this; it needs one of: ${allowed.join(", ")}`);
}

/** Route middleware: 403 unless the caller has one of the roles (checked before the body is read). */
export function requireRole(...allowed: Role[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    refuseRole(c, allowed);
    await next();
  };
}
