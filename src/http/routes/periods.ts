import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { changePeriod, getPeriod, listPeriods, setTimeZone, type Period } from "../../services/periods.js";
import { requireRole } from "../auth.js";
import { idempotently } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import { ApiError } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { Timestamp } from "../schemas.js";
import { canReadMarketplace } from "../tenancy.js";
import { errorResponses, json, jsonBody, security } from "./common.js";
import { MarketplaceId } from "./party-schemas.js";
import { ProposalOut, proposalOut } from "./proposal-schemas.js";

/** Accounting periods of a marketplace (docs/reconciliation.md, "Month-end close"). */

const PeriodName = z
  .string()
  .regex(/^\d{4}-(0[1-9]|1[0-2])$/, "must be YYYY-MM")
  .openapi({ example: "2026-11", description: "a month, YYYY-MM, in the marketplace's time zone" });
const Status = z.enum(["open", "closing", "closed"]);

const PeriodOut = z
  .object({
    marketplace_id: z.string(),
    period: PeriodName,
    time_zone: z.string().openapi({ example: "UTC" }),
    starts_at: Timestamp.openapi({ description: "the first instant of the month in the time zone" }),
    ends_at: Timestamp.openapi({ description: "the first instant of the next month: the period is [starts_at, ends_at)" }),
    status: Status.openapi({
      description:
        "open: posts as usual; closing: nothing new is back-dated into it; closed: nothing posts with an effective time inside it (late records and corrections are booked at the start of the first period after it that is not closed)",
    }),
    changed_by: z.string().nullable().openapi({ description: "the key that last changed its status (of a proposal: the proposer); null: never changed" }),
    changed_at: Timestamp.nullable(),
    proposal_id: z.string().nullable().openapi({ description: "the approved proposal that closed or reopened it last" }),
  })
  .openapi("AccountingPeriod");

const periodOut = (p: Period) => ({
  marketplace_id: p.marketplaceId,
  period: p.period,
  time_zone: p.timeZone,
  starts_at: p.startsAt.toISOString(),
  ends_at: p.endsAt.toISOString(),
  status: p.status,
  changed_by: p.changedBy,
  changed_at: p.changedAt?.toISOString() ?? null,
  proposal_id: p.proposalId,
});

const Params = z.object({ id: MarketplaceId, period: PeriodName });
const readers = requireRole("admin", "finance", "marketplace");

const list = createRoute({
  method: "get",
  path: "/v1/marketplaces/{id}/periods",
  operationId: "listPeriods",
  tags: ["reports"],
  summary: "The marketplace's current month and every month whose status changed, newest first (admin, finance, that marketplace)",
  security,
  middleware: [readers] as const,
  request: { params: z.object({ id: MarketplaceId }) },
  responses: { 200: json(z.object({ data: z.array(PeriodOut) }).openapi("AccountingPeriodList"), "the periods"), ...errorResponses },
});

const get = createRoute({
  method: "get",
  path: "/v1/marketplaces/{id}/periods/{period}",
  operationId: "getPeriod",
  tags: ["reports"],
  summary: "One month of the marketplace: its bounds and status (admin, finance, that marketplace)",
  security,
  middleware: [readers] as const,
  request: { params: Params },
  responses: { 200: json(PeriodOut, "the period"), ...errorResponses },
});

const change = createRoute({
  method: "put",
  path: "/v1/marketplaces/{id}/periods/{period}",
  operationId: "setPeriodStatus",
  tags: ["reports"],
  summary: "Start closing a month, close it, or reopen it (admin, finance)",
  description:
    "open → closing (once the month has ended) and closing → open take effect at once (200, the period). closing → closed and closed → open are proposals (202, kind period_close or period_reopen) that another, independent admin or finance key approves (POST /v1/proposals/{id}/approve). Any other change: 409 period_transition.",
  security,
  middleware: [requireRole("admin", "finance"), jsonBodyGuard] as const,
  request: { params: Params, body: jsonBody(z.strictObject({ status: Status }).openapi("AccountingPeriodChange")) },
  responses: { 200: json(PeriodOut, "the period, changed"), 202: json(ProposalOut, "the proposal (kind period_close or period_reopen)"), ...errorResponses },
});

const timeZone = createRoute({
  method: "put",
  path: "/v1/marketplaces/{id}/time-zone",
  operationId: "setMarketplaceTimeZone",
  tags: ["reports"],
  summary: "Set the time zone the marketplace's months are in (admin); refused once a month is closing or closed",
  security,
  middleware: [requireRole("admin"), jsonBodyGuard] as const,
  request: {
    params: z.object({ id: MarketplaceId }),
    body: jsonBody(
      z
        .strictObject({ time_zone: z.string().min(1).max(64).openapi({ example: "Europe/Berlin", description: "an IANA time zone name" }) })
        .openapi("MarketplaceTimeZone"),
    ),
  },
  responses: {
    200: json(z.object({ marketplace_id: z.string(), time_zone: z.string() }).openapi("MarketplaceTimeZoneSet"), "the time zone"),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  const missing = (id: string) => new ApiError("marketplace_not_found", `marketplace ${id} does not exist`);
  app.openapi(list, async (c) => {
    const { id } = c.req.valid("param");
    if (!canReadMarketplace(c, id)) throw missing(id);
    const db = c.get("deps").ledger.db;
    return c.json({ data: (await listPeriods(db, id, db.clock.now())).map(periodOut) }, 200);
  });
  app.openapi(get, async (c) => {
    const { id, period } = c.req.valid("param");
    if (!canReadMarketplace(c, id)) throw missing(id);
    return c.json(periodOut(await getPeriod(c.get("deps").ledger.db, id, period)), 200);
  });
  app.openapi(change, async (c) => {
    const { id, period } = c.req.valid("param");
    const body = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    return idempotently(c, body, async (tx) => {
      const r = await changePeriod(tx, { now: db.clock.now(), by: c.get("principal"), marketplaceId: id, period, status: body.status });
      return r.kind === "changed" ? { status: 200, body: periodOut(r.period) } : { status: 202, body: proposalOut(r.proposal) };
    }) as never;
  });
  app.openapi(timeZone, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    return idempotently(c, body, async (tx) => ({
      status: 200,
      body: { marketplace_id: id, time_zone: await setTimeZone(tx, { marketplaceId: id, timeZone: body.time_zone }) },
    })) as never;
  });
}
