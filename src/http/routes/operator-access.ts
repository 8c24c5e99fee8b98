import type { Context } from "hono";
import { getOperator } from "../../services/marketplaces.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";

/** Operator views: admin and finance see any operator; an operator key only itself (others are 404). */
export async function visibleOperator(c: Context<AppEnv>, id: string): Promise<void> {
  const p = c.get("principal");
  const mine = p.role === "admin" || p.role === "finance" || (p.role === "operator" && p.scopeId === id);
  if (!mine || !(await getOperator(c.get("deps").ledger.db, id))) throw new ApiError("operator_not_found", `operator ${id} does not exist`);
}
