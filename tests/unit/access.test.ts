import { describe, expect, it } from "vitest";
import { roles, withArticle } from "../../src/domain/access.js";

describe("refusals name the key's role in plain English", () => {
  it("an admin, a finance, a marketplace, an operator key", () => {
    expect(roles.map((r) => `${withArticle(r)} key`)).toEqual(["an admin key", "a finance key", "a marketplace key", "an operator key"]);
    expect(withArticle("operator_payout_limits")).toBe("an operator_payout_limits");
    expect(withArticle("usage_limits")).toBe("a usage_limits");
  });
});
