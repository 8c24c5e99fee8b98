import type { Context } from "hono";
import { withArticle } from "../domain/access.js";
import { getMarketplace } from "../services/marketplaces.js";
import type { AppEnv } from "./request-context.js";
import { ApiError } from "./problem.js";

/**
 * The marketplace a request acts for: a marketplace key's own (naming another is 403), or the
 * `marketplace_id` an admin names (required).
 */
export async function actingMarketplace(c: Context<AppEnv>, given: string | undefined): Promise<string> {
  const p = c.get("principal");
  if (p.role === "marketplace") {
    if (given !== undefined && given !== p.scopeId) throw new ApiError("forbidden", "a marketplace key can only act for its own marketplace");
    return p.scopeId!;
  }
  if (p.role === "admin") {
    if (given === undefined)
      throw new ApiError("invalid_request", "admin keys must name the marketplace_id they act for", [
        { path: "marketplace_id", message: "is required for admin keys" },
      ]);
    if (!(await getMarketplace(c.get("deps").ledger.db, given))) throw new ApiError("marketplace_not_found", `marketplace ${given} does not exist`);
    return given;
  }
  throw new ApiError("forbidden", `${withArticle(p.role)} key may not do this`);
}

/** Whether the key may read data of this marketplace. */
export function canReadMarketplace(c: Context<AppEnv>, marketplaceId: string): boolean {
  const p = c.get("principal");
  return p.role === "admin" || p.role === "finance" || (p.role === "marketplace" && p.scopeId === marketplaceId);
}
