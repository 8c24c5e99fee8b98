import { createHash } from "node:crypto";
import type { Context } from "hono";
import type { AuditEntry } from "../services/audit-log.js";
import { bodyIfRead } from "./middleware/body-limit.js";
import type { AppEnv } from "./request-context.js";

/**
 * The audit row of a request, with the status it is answered with: who (key, role, scope), what
 * (method, path, route, a hash of the body) and the outcome. Written in the change's own transaction
 * when the request changes something (idempotency.ts), else by the audit middleware.
 */
export async function auditEntryOf(c: Context<AppEnv>, status: number): Promise<AuditEntry> {
  let bodySha256: string | null = null;
  let bodyBytes: number | null = null;
  try {
    // A body nothing read (a request refused before it) is not waited for: recorded without it.
    const reading = bodyIfRead(c);
    if (reading !== undefined) {
      const body = Buffer.from(await reading);
      bodyBytes = body.byteLength;
      bodySha256 = createHash("sha256").update(body).digest("hex");
    }
  } catch {
    // an unreadable body (over the size limit, late, cut off): recorded without it
  }
  const p = c.var.principal;
  return {
    keyId: p?.keyId ?? null,
    role: p?.role ?? null,
    scopeId: p?.scopeId ?? null,
    method: c.req.method,
    path: c.req.path.slice(0, 2000),
    route: c.req.routePath ?? null,
    status,
    requestId: c.get("requestId"),
    clientRequestId: c.var.clientRequestId ?? null,
    idempotencyKey: c.req.header("idempotency-key")?.slice(0, 255) ?? null,
    bodySha256,
    bodyBytes,
  };
}
