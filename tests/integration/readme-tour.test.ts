import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/anvil-chain.js";
import { serviceProcessArgs } from "../support/service-build.js";

const root = join(import.meta.dirname, "..", "..");
const tsx = join(root, "node_modules", ".bin", "tsx");

/**
 * The README's curl tour, run as a reader runs it: `npm run chain:local`, the service started as
 * `npm start` starts it (embedded PGlite in ./data, the bootstrap admin key in data/admin-api-key),
 * then the tour's first two shell blocks as written, in bash with curl and jq. Each JSON line the
 * README shows as a comment (`# {...}`) must be answered, in order: its fields with the values
 * shown (`…` or `...` stands for the rest of a value or of an object).
 *
 * Three things differ from a reader's terminal, each replaced in the text and checked to be there:
 * the port (a free one instead of 8080), `npm run --silent sign-message` (run from the checkout, the
 * tour's folder being a fresh one) and the `sleep 6` before the payout is read (a bounded wait until
 * it is confirmed: the suite shares the machine).
 */
describe("the README's curl tour [PGlite run only: the tour starts the service on its own embedded database]", () => {
  const started: ChildProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), "readme-tour-"));
  afterAll(() => {
    for (const p of started) p.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== "")(
    "answers what the README shows, on a fresh folder, with the local chain",
    async () => {
      const readme = readFileSync(join(root, "README.md"), "utf8");
      const blocks = tourBlocks(readme);
      expect(blocks.length).toBeGreaterThanOrEqual(2);
      const chainPort = await freePort();
      const port = await freePort();
      mkdirSync(join(dir, "data"));

      const chain = spawn(tsx, [join(root, "scripts", "chain-local.ts")], { cwd: dir, env: { ...process.env, CHAIN_PORT: String(chainPort) } });
      started.push(chain);
      await output(chain, /Ctrl-C stops the chain/, 90_000);

      const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), CHAINS_FILE: "data/local-chain.json" };
      for (const k of ["DATABASE_URL", "ADMIN_API_KEY", "PGLITE_DATA_DIR", "ADMIN_API_KEY_FILE", "CLOCK_START"]) delete env[k];
      const service = spawn(process.execPath, serviceProcessArgs("src/main.ts"), { cwd: dir, env });
      started.push(service);
      await output(service, /listening on http/, 90_000);

      let script = blocks.slice(0, 2).join("\n");
      script = replaceChecked(script, "localhost:8080", `127.0.0.1:${port}`);
      script = replaceChecked(
        script,
        "sleep 6; ",
        'for _ in $(seq 1 120); do [ "$(op 127.0.0.1:PORT/v1/payouts/$PAYOUT | jq -r .status)" = confirmed ] && break; sleep 0.5; done; '.replace(
          "PORT",
          String(port),
        ),
      );
      expect(script).toContain("npm run --silent sign-message");
      const prelude = [
        "set -u",
        `npm() { if [ "$1 $2 $3" = "run --silent sign-message" ]; then shift 4; "${tsx}" "${join(root, "scripts", "sign-message.ts")}" "$@"; else command npm "$@"; fi; }`,
      ].join("\n");
      const run = spawnSync("bash", ["-c", `${prelude}\n${script}`], { cwd: dir, encoding: "utf8", timeout: 180_000 });
      const shown = `exit ${run.status}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
      expect(run.status, shown).toBe(0);

      const answers = jsonValues(run.stdout);
      let at = 0;
      for (const expected of expectations(blocks.slice(0, 2).join("\n"))) {
        const found = answers.findIndex((a, k) => k >= at && matches(a, expected));
        expect(found, `the README shows ${JSON.stringify(expected)}; the tour answered:\n${shown}`).toBeGreaterThanOrEqual(0);
        at = found + 1;
      }
      // Every shown answer was checked, and there are some.
      expect(expectations(blocks.slice(0, 2).join("\n")).length).toBeGreaterThanOrEqual(8);
    },
    300_000,
  );
});

/** The shell blocks of the README's section "A tour of the API with curl", in order. */
function tourBlocks(readme: string): string[] {
  const start = readme.indexOf("## A tour of the API with curl");
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function replaceChecked(text: string, what: string, by: string): string {
  expect(text, `the tour no longer has ${JSON.stringify(what)}`).toContain(what);
  return text.split(what).join(by);
}

/** The JSON answers a comment line shows (`# {...}`, or a comment ending in one), with `…` and `...` as wildcards. */
function expectations(script: string): unknown[] {
  const out: unknown[] = [];
  for (const line of script.split("\n")) {
    const m = /^\s*#.*?(\{".*\})\s*$/.exec(line);
    if (!m) continue;
    const text = m[1]!.replace(/,\s*(\.\.\.|…)\s*}/g, "}");
    out.push(JSON.parse(text));
  }
  return out;
}

/** Every JSON object the tour printed (one per line, or spread over lines as `jq` prints them). */
function jsonValues(stdout: string): unknown[] {
  const values: unknown[] = [];
  let buffer = "";
  for (const line of stdout.split("\n")) {
    if (buffer === "" && !line.startsWith("{")) continue;
    buffer += line + "\n";
    try {
      values.push(JSON.parse(buffer));
      buffer = "";
    } catch {
      if (buffer.length > 1_000_000) buffer = "";
    }
  }
  return values;
}

/** The answer has the expected fields with the expected values; a string with `…` matches on what precedes it. */
function matches(actual: unknown, expected: unknown): boolean {
  if (typeof expected === "string" && expected.includes("…")) return typeof actual === "string" && actual.startsWith(expected.slice(0, expected.indexOf("…")));
  if (expected === null || typeof expected !== "object") return actual === expected;
  if (actual === null || typeof actual !== "object") return false;
  return Object.entries(expected).every(([k, v]) => k in actual && matches((actual as Record<string, unknown>)[k], v));
}

/** Resolves once the process printed a line matching `ready`; rejects if it ends first or after `ms`. */
function output(p: ChildProcess, ready: RegExp, ms: number): Promise<void> {
  let seen = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready after ${ms} ms:\n${seen}`)), ms);
    const on = (chunk: Buffer) => {
      seen += chunk.toString();
      if (ready.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    };
    p.stdout?.on("data", on);
    p.stderr?.on("data", on);
    p.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before it was ready:\n${seen}`));
    });
  });
}
