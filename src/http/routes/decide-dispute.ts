import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { afterRelease, rejectDispute, upholdDispute } from "../../services/decide-dispute.js";
import { requireRole } from "../auth.js";
import { idempotently, replayOrRun } from "../idempotency.js";
import { jsonBodyGuard } from "../json-body.js";
import type { AppEnv } from "../request-context.js";
import { IdParam } from "../schemas.js";
import { errorResponses, IdempotencyHeader, json, jsonBody, security } from "./common.js";
import { DisputeOut, disputeOut, DisputeText } from "./dispute-schemas.js";

const uphold = createRoute({
  method: "post",
  path: "/v1/disputes/{id}/uphold",
  operationId: "upholdDispute",
  tags: ["disputes"],
  summary:
    "Uphold a dispute: its records are reversed (customers refunded, fees reversed, earnings taken back; what an operator was already paid becomes its receivable) (finance, admin; not the key that opened it)",
  security,
  middleware: [requireRole("admin", "finance"), jsonBodyGuard] as const,
  request: {
    params: IdParam,
    headers: IdempotencyHeader,
    body: jsonBody(z.strictObject({ note: DisputeText.optional().openapi({ example: "meter logs confirm the failure" }) }).openapi("DisputeUphold"), false),
  },
  responses: { 200: json(DisputeOut, "the dispute, upheld, its records reversed"), ...errorResponses },
});

const reject = createRoute({
  method: "post",
  path: "/v1/disputes/{id}/reject",
  operationId: "rejectDispute",
  tags: ["disputes"],
  summary: "Reject a dispute: the earnings it held are released (finance, admin; not the key that opened it)",
  security,
  middleware: [requireRole("admin", "finance"), jsonBodyGuard] as const,
  request: {
    params: IdParam,
    headers: IdempotencyHeader,
    body: jsonBody(z.strictObject({ note: DisputeText.openapi({ example: "the job's logs show it completed" }) }).openapi("DisputeReject")),
  },
  responses: { 200: json(DisputeOut, "the dispute, rejected"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(uphold, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json") ?? {};
    return replayOrRun(c, body, async (_, receipts) => {
      const d = await upholdDispute(c.get("deps").ledger.db, { id, by: c.get("principal"), note: body.note ?? null, receipt: receipts.audited(200) });
      return { status: 200, body: disputeOut(d), receipt: "audit" };
    }) as never;
  });
  app.openapi(reject, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const db = c.get("deps").ledger.db;
    let released: Awaited<ReturnType<typeof rejectDispute>> | undefined;
    const res = await idempotently(c, body, async (tx) => {
      released = await rejectDispute(tx, { id, by: c.get("principal"), note: body.note, now: db.clock.now() });
      return { status: 200, body: disputeOut(released) };
    });
    if (released) await afterRelease(db, released);
    return res as never;
  });
}
