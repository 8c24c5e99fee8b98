import { createHash } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { RefusedAuditBudget, type AuditEntry } from "../../services/audit-log.js";
import { ApiError, problemResponse } from "../problem.js";
import type { AppDeps, AppEnv } from "../request-context.js";

/**
 * The audit log: every mutating call under /v1, whatever its outcome, is recorded before its
 * answer is sent (group-committed with concurrent calls); so are refused requests of any method
 * (401, 403, 413, 429), within a budget per source so that a flood cannot fill the disk. It runs
 * before the body limit, so that an oversized body is recorded too.
 */
export function auditLog(deps: AppDeps): MiddlewareHandler<AppEnv> {
  const refusedBudget = new RefusedAuditBudget();
  return async (c, next) => {
    const mutating = ["POST", "PUT", "PATCH", "DELETE"].includes(c.req.method);
    await next();
    const refused = [401, 403, 413, 429].includes(c.res.status);
    if (!mutating && !refused) return;
    if (refused && !refusedBudget.take(c.var.principal?.keyId ?? "anonymous", Date.now())) {
      deps.metrics.auditRefusedDropped.inc();
      return;
    }
    await record(deps, c, await auditEntry(c));
  };
}

/** The audit row of a request that has its answer. */
async function auditEntry(c: Context<AppEnv>): Promise<AuditEntry> {
  let bodySha256: string | null = null;
  let bodyBytes: number | null = null;
  try {
    const body = Buffer.from(await c.req.arrayBuffer());
    bodyBytes = body.byteLength;
    bodySha256 = createHash("sha256").update(body).digest("hex");
  } catch {
    // an unreadable body (over the size limit): recorded without it
  }
  const p = c.var.principal;
  return {
    keyId: p?.keyId ?? null,
    role: p?.role ?? null,
    scopeId: p?.scopeId ?? null,
    method: c.req.method,
    path: c.req.path.slice(0, 2000),
    route: c.req.routePath ?? null,
    status: c.res.status,
    requestId: c.get("requestId"),
    clientRequestId: c.var.clientRequestId ?? null,
    idempotencyKey: c.req.header("idempotency-key")?.slice(0, 255) ?? null,
    bodySha256,
    bodyBytes,
  };
}

/** Writes the row, three attempts; failing that, the answer becomes a 503. */
async function record(deps: AppDeps, c: Context<AppEnv>, entry: AuditEntry): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.ledger.audit.submit(entry);
      return;
    } catch (err) {
      if (attempt < 3) {
        await new Promise((r) => setTimeout(r, 100 * attempt));
        continue;
      }
      // No answer without its audit row: the caller retries with its Idempotency-Key and gets
      // the original answer back, recorded this time.
      deps.log.error({ request_id: c.get("requestId"), err: String(err) }, "audit log write failed");
      c.res = problemResponse(
        c,
        new ApiError("unavailable", "the audit log could not be written; retry with the same Idempotency-Key", [], { "retry-after": "1" }),
      );
      return;
    }
  }
}
