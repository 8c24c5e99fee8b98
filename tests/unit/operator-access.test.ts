import type { Context } from "hono";
import { describe, expect, it } from "vitest";
import { operatorInScope } from "../../src/http/routes/operator-access.js";
import type { AppEnv } from "../../src/http/request-context.js";

/**
 * An operator's balances are read together with the check that the operator exists, but only once
 * the caller is known to be allowed to see it: a key out of scope is refused before anything is
 * read, so it cannot make the service read another tenant's balances (and pay for it) at all.
 */
function context(principal: { role: string; scopeId: string | null }, lookups: string[]): Context<AppEnv> {
  const deps = {
    ledger: {
      db: {
        query: async (_text: string, params: unknown[]) => {
          lookups.push(String(params[0]));
          return [];
        },
      },
    },
  };
  return { get: (k: string) => (k === "principal" ? { keyId: "k", ...principal } : deps) } as unknown as Context<AppEnv>;
}

describe("an operator in the caller's scope", () => {
  it("refuses another operator's key, and a marketplace's, at once: no query, and the same 404 as for an unknown operator", () => {
    for (const principal of [
      { role: "operator", scopeId: "o2" },
      { role: "marketplace", scopeId: "m1" },
      { role: "customer", scopeId: "c1" },
    ]) {
      const lookups: string[] = [];
      expect(() => operatorInScope(context(principal, lookups), "o1")).toThrow(expect.objectContaining({ code: "operator_not_found" }));
      expect(lookups).toEqual([]);
    }
  });

  it("lets admin, finance and the operator itself on to the existence check, which refuses an unknown operator the same way", async () => {
    for (const principal of [
      { role: "admin", scopeId: null },
      { role: "finance", scopeId: null },
      { role: "operator", scopeId: "o1" },
    ]) {
      const lookups: string[] = [];
      const exists = operatorInScope(context(principal, lookups), "o1");
      await expect(exists()).rejects.toMatchObject({ code: "operator_not_found" });
      expect(lookups.length).toBeGreaterThan(0);
    }
  });
});
