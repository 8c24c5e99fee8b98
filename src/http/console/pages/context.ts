import type { Principal } from "../../../domain/access.js";
import type { ConsoleApi } from "../api.js";
import type { Page } from "../layout.js";

/** What a page is rendered from: the API with the session's key, who that key is, the URL's query and path parameters. */
export interface PageCtx {
  api: ConsoleApi;
  principal: Principal;
  q: URLSearchParams;
  params: Record<string, string>;
  /** The session's CSRF token, for the page's POST forms. */
  csrf: string;
  /** The service's clock. */
  now: Date;
  path: string;
}

export type PageFn = (ctx: PageCtx) => Promise<Page>;

const DAY = 86_400_000;

/** The midnight (UTC) of an instant's day, as an ISO string. */
const dayStart = (ms: number) => new Date(Math.floor(ms / DAY) * DAY).toISOString();

/** The period of a report page: the URL's from and to, or the last 28 whole days and today (by the service's clock). */
export function periodOf(ctx: PageCtx): { from: string; to: string } {
  const from = ctx.q.get("from") || dayStart(ctx.now.getTime() - 28 * DAY);
  const to = ctx.q.get("to") || dayStart(ctx.now.getTime() + DAY);
  return { from, to };
}

/** A query parameter, or undefined when absent or empty. */
export const param = (ctx: PageCtx, name: string): string | undefined => ctx.q.get(name) || undefined;

/** The operator a page is about: an operator key's own; for a platform key, the one named in `?operator=`. */
export const operatorOf = (ctx: PageCtx): string | undefined =>
  ctx.principal.role === "operator" ? (ctx.principal.scopeId ?? undefined) : param(ctx, "operator");

/** The marketplace a page is about: a marketplace key's own; for a platform key, the one named in `?marketplace=`. */
export const marketplaceOf = (ctx: PageCtx): string | undefined =>
  ctx.principal.role === "marketplace" ? (ctx.principal.scopeId ?? undefined) : param(ctx, "marketplace");

/** "2026-10-15T11:00:00.000Z" as "2026-10-15 11:00 UTC". */
export const when = (iso: string | null | undefined): string => (iso ? iso.replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, " UTC") : "");
