import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { verifyLedger } from "../../services/verify-ledger.js";
import { requireRole } from "../auth.js";
import type { AppEnv } from "../request-context.js";
import { errorResponses, json, security } from "./common.js";

const Out = z
  .object({
    ok: z.boolean(),
    violations: z.array(z.object({ check: z.string(), detail: z.string() })).openapi({ description: "for the hash chain, the first broken link" }),
    counts: z.object({ assets: z.number().int(), accounts: z.number().int(), transfers: z.number().int(), entries: z.number().int(), seals: z.number().int() }),
  })
  .openapi("LedgerVerification");

const route = createRoute({
  method: "get",
  path: "/v1/audit/verify",
  operationId: "verifyLedger",
  tags: ["audit"],
  summary: "Check the ledger's invariants and its sealed hash chain, as npm run verify does (admin, finance)",
  security,
  middleware: [requireRole("admin", "finance")] as const,
  responses: { 200: json(Out, "ok, or every violation found"), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, async (c) => c.json(await verifyLedger(c.get("deps").ledger.db), 200));
}
