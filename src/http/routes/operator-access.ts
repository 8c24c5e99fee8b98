import type { Context } from "hono";
import { getOperator } from "../../services/marketplaces.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";

/** Operator views: admin and finance see any operator; an operator key only itself (others are 404). */
export async function visibleOperator(c: Context<AppEnv>, id: string): Promise<void> {
  await operatorInScope(c, id)();
}

/**
 * visibleOperator in two steps, for a read sent together with its check: whether the caller may
 * see the operator at all is decided here, at once, before anything is read (so a 404 costs no
 * read); the function answered checks that the operator exists (one query, which the read may go
 * with) and throws the same 404 when it does not.
 */
export function operatorInScope(c: Context<AppEnv>, id: string): () => Promise<void> {
  const p = c.get("principal");
  const mine = p.role === "admin" || p.role === "finance" || (p.role === "operator" && p.scopeId === id);
  if (!mine) throw notFound(id);
  return async () => {
    if (!(await getOperator(c.get("deps").ledger.db, id))) throw notFound(id);
  };
}

const notFound = (id: string) => new ApiError("operator_not_found", `operator ${id} does not exist`);
