/**
 * `npm run lint:openapi` (part of `npm run lint`): writes the OpenAPI document the service serves
 * at /openapi.json (built without a database or a server, as docs:api does) to a temporary file
 * and runs `redocly lint` on it with redocly.yaml (the `recommended` rules). Fails on any error
 * *or warning* (redocly itself exits 0 on warnings), showing them as redocly does.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openApiDocument } from "./api-docs.js";

const root = join(import.meta.dirname, "..");
const redocly = join(root, "node_modules", ".bin", "redocly");
const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };

function lint(file: string): number {
  const args = ["lint", "--config", join(root, "redocly.yaml"), "--max-problems", "1000", file];
  const run = spawnSync(redocly, [...args, "--format", "json"], { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (run.error) throw run.error;
  let totals: { errors: number; warnings: number } | undefined;
  try {
    totals = (JSON.parse(run.stdout) as { totals: { errors: number; warnings: number } }).totals;
  } catch {
    process.stderr.write(run.stdout + run.stderr);
    console.error("lint:openapi: redocly lint did not report its results");
    return 1;
  }
  if (totals.errors === 0 && totals.warnings === 0 && run.status === 0) {
    console.log("OpenAPI document: redocly lint (redocly.yaml) reports 0 errors and 0 warnings");
    return 0;
  }
  // Show the problems with their context, then fail whatever redocly's own exit status.
  spawnSync(redocly, args, { env, stdio: "inherit" });
  console.error(`lint:openapi: ${totals.errors} errors and ${totals.warnings} warnings in the OpenAPI document`);
  return 1;
}

const dir = mkdtempSync(join(tmpdir(), "openapi-lint-"));
let status = 1;
try {
  const file = join(dir, "openapi.json");
  writeFileSync(file, JSON.stringify(await openApiDocument(), null, 2));
  status = lint(file);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(status);
