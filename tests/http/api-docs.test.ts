import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { endpointTable, openApiDocument, withTable } from "../../scripts/api-docs.js";

describe("docs/api.md", () => {
  it("lists exactly the operations of the OpenAPI document (npm run docs:api regenerates it)", async () => {
    const text = readFileSync(join(import.meta.dirname, "..", "..", "docs", "api.md"), "utf8");
    expect(withTable(text, await endpointTable())).toBe(text);
  });
});

const METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

describe("the OpenAPI document", () => {
  it("gives every operation a unique camelCase operationId (clients name their methods after it)", async () => {
    const doc = (await openApiDocument()) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const ops = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.has(method))
        .map(([method, op]) => ({ operation: `${method.toUpperCase()} ${path}`, id: op.operationId })),
    );
    expect(ops.length).toBeGreaterThan(0);
    expect(ops.filter((o) => o.id === undefined).map((o) => o.operation)).toEqual([]);
    expect(ops.filter((o) => !/^[a-z][A-Za-z0-9]*$/.test(o.id ?? "")).map((o) => `${o.operation}: ${o.id}`)).toEqual([]);
    const seen = new Map<string, string[]>();
    for (const o of ops) if (o.id !== undefined) seen.set(o.id, [...(seen.get(o.id) ?? []), o.operation]);
    expect([...seen].filter(([, same]) => same.length > 1).map(([id, same]) => `${id}: ${same.join(", ")}`)).toEqual([]);
  });
});
