import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { endpointTable, withTable } from "../../scripts/api-docs.js";

describe("docs/api.md", () => {
  it("lists exactly the operations of the OpenAPI document (npm run docs:api regenerates it)", async () => {
    const text = readFileSync(join(import.meta.dirname, "..", "..", "docs", "api.md"), "utf8");
    expect(withTable(text, await endpointTable())).toBe(text);
  });
});
