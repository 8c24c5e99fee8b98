import type { Context, MiddlewareHandler } from "hono";
import { RefusedAuditBudget, type AuditEntry } from "../../services/audit-log.js";
import { auditEntryOf } from "../audit-entry.js";
import { ApiError, problemResponse } from "../problem.js";
import type { AppDeps, AppEnv } from "../request-context.js";

/**
 * The audit log: every mutating call under /v1, whatever its outcome, is recorded before its
 * answer is sent; so are refused requests of any method (401, 403, 413, 429), within a budget per
 * source so that a flood cannot fill the disk. A call that changed something has its row written in
 * the change's own transaction (idempotency.ts: `c.var.audited`); the others (refusals, replays,
 * failures) are recorded here, group-committed with concurrent calls. It runs before the body
 * limit, so that an oversized body is recorded too.
 */
export function auditLog(deps: AppDeps): MiddlewareHandler<AppEnv> {
  const refusedBudget = new RefusedAuditBudget();
  return async (c, next) => {
    const mutating = ["POST", "PUT", "PATCH", "DELETE"].includes(c.req.method);
    await next();
    if (c.var.audited) return;
    const refused = [401, 403, 413, 429].includes(c.res.status);
    if (!mutating && !refused) return;
    if (refused && !refusedBudget.take(c.var.principal?.keyId ?? "anonymous", Date.now())) {
      deps.metrics.auditRefusedDropped.inc();
      return;
    }
    await record(deps, c, await auditEntryOf(c, c.res.status));
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
