import type { Context } from "hono";
import type { Principal } from "../../domain/access.js";
import { statementParty, type StatementParty } from "../../services/customer-statements.js";
import type { AppEnv } from "../request-context.js";
import { ApiError } from "../problem.js";
import { PartyIdParam } from "./party-schemas.js";

/**
 * Who sees which marketplaces, operators and customers (GET /v1/marketplaces, /v1/operators,
 * /v1/customers and their reads by id). Admin and finance keys see every one; a marketplace key its
 * own marketplace, the operators linked to it and its customers; an operator key itself. What a key
 * may not see is answered as a missing one (404), and filtered out of lists.
 */

/** The filter a key's operator reads run with: a marketplace key's linked operators, an operator key itself. */
export function operatorScope(p: Principal): { marketplaceId?: string; id?: string } {
  if (p.role === "marketplace") return { marketplaceId: p.scopeId! };
  if (p.role === "operator") return { id: p.scopeId! };
  return {};
}

/** The marketplaces of an operator the key may know of: a marketplace key only its own. */
export function visibleMarketplaceIds(p: Principal, ids: string[]): string[] {
  return p.role === "marketplace" ? ids.filter((m) => m === p.scopeId) : ids;
}

/**
 * The marketplace whose customer a read by id names: a marketplace key's own (naming another finds
 * nothing: undefined, answered 404 like a missing customer), or the `marketplace_id` that admin and
 * finance keys must name (customer ids are per marketplace).
 */
export function customerMarketplace(c: Context<AppEnv>, given: string | undefined): string | undefined {
  const p = c.get("principal");
  if (p.role === "marketplace") return given === undefined || given === p.scopeId ? p.scopeId! : undefined;
  if (given === undefined)
    throw new ApiError("invalid_request", `${p.role} keys must name the marketplace_id of the customer (customer ids are per marketplace)`, [
      { path: "marketplace_id", message: `is required for ${p.role} keys` },
    ]);
  return given;
}

/**
 * The customer a read by id names (a statement, a balance), with its marketplace, as the key may see
 * it: another marketplace's customer is answered as a missing one (404), without being read.
 */
export async function visibleCustomer(c: Context<AppEnv>, id: string, given: string | undefined): Promise<StatementParty> {
  const marketplaceId = customerMarketplace(c, given);
  const party = marketplaceId === undefined ? undefined : await statementParty(c.get("deps").ledger.db, marketplaceId, id);
  if (!party) throw new ApiError("customer_not_found", `customer ${id} does not exist`);
  return party;
}

/** The id a party list's cursor names (the last id of the previous page); 400 when it is not one. */
export function partyCursor(cursor: string | undefined): string | undefined {
  if (cursor !== undefined && !PartyIdParam.safeParse(cursor).success) throw badCursor();
  return cursor;
}

/** A customer list's cursor: `{marketplace_id}/{id}` of the last customer of the previous page. */
export function customerCursor(cursor: string | undefined): { marketplaceId: string; id: string } | undefined {
  if (cursor === undefined) return undefined;
  const [marketplaceId, id, ...rest] = cursor.split("/");
  if (rest.length > 0 || !PartyIdParam.safeParse(marketplaceId).success || !PartyIdParam.safeParse(id).success) throw badCursor();
  return { marketplaceId: marketplaceId!, id: id! };
}

const badCursor = () => new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
