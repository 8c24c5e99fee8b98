import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

/**
 * The PostgreSQL driver must carry the guard that patches/postgres+3.4.9.patch applies after install (patch-package)
 * (see docs/reliability.md, "Database outages"): without it, a connection closing under load can
 * end the process. An install with scripts disabled would leave it out.
 */
/** The driver's connection.js of one variant (`src`, the ESM entry; `cjs/src`, the CommonJS one). */
function connectionSource(variant: string): string {
  const pkg = dirname(dirname(dirname(createRequire(import.meta.url).resolve("postgres"))));
  return readFileSync(join(pkg, variant, "connection.js"), "utf8");
}

describe("the PostgreSQL driver's write on a closed connection", () => {
  it("is guarded in the module the service loads", () => {
    // The package's CommonJS entry is <package>/cjs/src/index.js.
    for (const variant of ["src", "cjs/src"]) {
      const code = connectionSource(variant);
      const nextWrite = code.slice(code.indexOf("function nextWrite(fn) {"), code.indexOf("function nextWrite(fn) {") + 400);
      expect(nextWrite, `${variant}/connection.js`).toMatch(/if \(!socket\)/);
      expect(nextWrite.indexOf("if (!socket)")).toBeLessThan(nextWrite.indexOf("socket.write("));
      // Reported as not written (see docs/reliability.md).
      expect(nextWrite.slice(nextWrite.indexOf("if (!socket)"), nextWrite.indexOf("socket.write("))).toMatch(/return false/);
    }
  });

  it("reserves a transaction's connection even when nothing may be pipelined (max_pipeline: 0, used through a transaction pooler)", () => {
    // Unpatched, sql.begin() with max_pipeline 0 sends BEGIN and fails with UNSAFE_TRANSACTION
    // (porsager/postgres#1210): the hook that reserves the connection sat behind the pipeline's check.
    for (const variant of ["src", "cjs/src"]) {
      const code = connectionSource(variant);
      const execute = code.slice(code.indexOf("function execute(q) {"), code.indexOf("function toBuffer(q) {"));
      expect(execute.indexOf("q.options.onexecute(connection)"), `${variant}/connection.js`).toBeGreaterThan(0);
      expect(execute.indexOf("q.options.onexecute(connection)")).toBeLessThan(execute.indexOf("sent.length < max_pipeline"));
    }
  });

  it("forgets the rows, the count and the error of a query that failed in the middle of its rows (tests/integration/driver-rows.test.ts shows why)", () => {
    for (const variant of ["src", "cjs/src"]) {
      const code = connectionSource(variant);
      const ready = code.slice(code.indexOf("function ReadyForQuery(x) {"), code.indexOf("function CommandComplete(x) {"));
      expect(ready, `${variant}/connection.js`).toMatch(/result = new Result\(\)\s+\/\*[^]*?\*\/\s+rows = 0/);
      const closed = code.slice(code.indexOf("async function closed(hadError) {"), code.indexOf("function handle(xs, x = xs[0]) {"));
      expect(closed, `${variant}/connection.js`).toMatch(/result = new Result\(\)\s+rows = 0/);
    }
  });
});
