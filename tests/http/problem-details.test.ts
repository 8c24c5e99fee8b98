import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../scripts/api-docs.js";
import { problemsFile, problemsMarkdown } from "../../scripts/problem-docs.js";
import { problemBody, problemCodes, problemStatus, type ProblemCode } from "../../src/http/problem.js";
import { problemCatalog } from "../../src/http/problems/catalog.js";
import { problemActions } from "../../src/http/problems/explanation.js";
import { RateLimiter } from "../../src/http/rate-limit.js";
import { expectStatus, testApi, worldPerFile, type ApiResponse } from "../support/http.js";

/**
 * Every problem says what to fix. The catalog (src/http/problems/) explains every code, each
 * problem `type` resolves to its page, the OpenAPI document shows an example of each, and the
 * `detail` of a real answer names the field, value or limit at fault, not a generic sentence.
 */
const t = worldPerFile();

/** Sentences that say something went wrong without saying what. */
const GENERIC =
  /^(bad request|invalid( request| input)?|error|an? error occurred|not found|forbidden|unauthorized|conflict|request failed|something went wrong)\.?$/i;

/** What a client does, by kind of action: the words its explanation must use. */
const actionWords: Record<keyof typeof problemActions, RegExp> = {
  fix_request: /\b(fix|correct|send|use|give|check|choose|lower|split|trim|create|register|post|void|sign|serialize|have|read|stop|reject|ask for)\b/i,
  retry: /\bretry\b/i,
  wait: /\bwait\b/i,
  ask: /\bask\b/i,
  stop: /\bdo not\b/i,
  report: /\breport\b/i,
};

describe("the problem catalog explains every problem code", () => {
  for (const code of problemCodes) {
    it(`${code}: what it means, its causes, and an action`, () => {
      const e = problemCatalog[code];
      const title = problemBody(code, "").title;
      expect(e, code).toBeDefined();
      expect(e.means.length, `${code}: means`).toBeGreaterThanOrEqual(30);
      expect(e.means.toLowerCase()).not.toBe(title.toLowerCase());
      expect(e.causes.length, `${code}: causes`).toBeGreaterThan(0);
      for (const cause of e.causes) expect(cause.length, `${code}: cause "${cause}"`).toBeGreaterThanOrEqual(15);
      expect(Object.keys(problemActions)).toContain(e.action);
      expect(e.todo.length, `${code}: todo`).toBeGreaterThanOrEqual(40);
      expect(e.todo, `${code}: todo names the action (${e.action})`).toMatch(actionWords[e.action]);
      expect(e.example.length, `${code}: example detail`).toBeGreaterThanOrEqual(20);
      expect(e.example).not.toMatch(GENERIC);
      expect(e.example.toLowerCase()).not.toBe(title.toLowerCase());
      // Field paths on the wire are snake_case.
      for (const issue of e.exampleErrors ?? []) expect(issue.path).toMatch(/^[a-z0-9_.()]+$/);
    });
  }

  it("gives each code its own explanation", () => {
    const means = problemCodes.map((c) => problemCatalog[c].means);
    expect(means.filter((m, i) => means.indexOf(m) !== i)).toEqual([]);
    const examples = problemCodes.map((c) => problemCatalog[c].example);
    expect(examples.filter((m, i) => examples.indexOf(m) !== i)).toEqual([]);
  });

  it("explains no code the service does not answer", () => {
    expect(Object.keys(problemCatalog).sort()).toEqual([...problemCodes].sort());
  });

  it("docs/problems.md is the catalog as it is (npm run docs:api regenerates it)", () => {
    expect(readFileSync(problemsFile, "utf8")).toBe(problemsMarkdown());
  });
});

/** Every `new ApiError("code", "…")` and `new LedgerError("code", "…")` of src/, with a literal detail. */
function thrownDetails(): Array<{ file: string; code: string; detail: string }> {
  const root = join(import.meta.dirname, "..", "..", "src");
  const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
  const out: Array<{ file: string; code: string; detail: string }> = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    for (const m of text.matchAll(/new (?:ApiError|LedgerError)\(\s*"(\w+)",\s*(`[^`]*`|"(?:[^"\\]|\\.)*")/g)) {
      out.push({ file, code: m[1]!, detail: m[2]!.slice(1, -1) });
    }
  }
  return out;
}

describe("the details the service writes", () => {
  it("every literal detail in src/ is a problem code's and says more than its title", () => {
    const found = thrownDetails();
    expect(found.length).toBeGreaterThan(50);
    for (const f of found) {
      expect(problemCodes, `${f.file}: ${f.code}`).toContain(f.code);
      const title = problemBody(f.code as ProblemCode, "").title;
      expect(f.detail.length, `${f.file}: ${f.code}: "${f.detail}"`).toBeGreaterThanOrEqual(20);
      expect(f.detail, `${f.file}: ${f.code}`).not.toMatch(GENERIC);
      expect(f.detail.toLowerCase(), `${f.file}: ${f.code}`).not.toBe(title.toLowerCase());
    }
  });
});

describe("each problem type is a page", () => {
  it("GET /problems/<code> explains every code, without an API key and without anything from outside", async () => {
    for (const code of problemCodes) {
      const res = await t.api.call("GET", `/problems/${code}`, { key: null });
      expect(res.status, code).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      const html = res.body as string;
      expect(html).toContain(`<code>code: ${code}</code>`);
      expect(html).toContain(`HTTP ${problemStatus(code)}`);
      expect(html).toContain(problemActions[problemCatalog[code].action]);
      expect(html).not.toMatch(/<script|(src|href)="(https?:)?\/\//i);
    }
  });

  it("GET /problems lists every code; an unknown code is a 404 problem naming it", async () => {
    const index = expectStatus(await t.api.call("GET", "/problems", { key: null }), 200).body as string;
    for (const code of problemCodes) expect(index).toContain(`href="/problems/${code}"`);
    const res = await t.api.call("GET", "/problems/no_such_problem", { key: null });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/problem\+json/);
    expect(res.body).toMatchObject({ type: "/problems/not_found", code: "not_found" });
    expect(res.body.detail).toContain("no_such_problem");
  });

  it("the public listener serves them too: its answers link to them", async () => {
    const pub = await testApi({ db: t.api.db, surface: "public" });
    try {
      const refused = await pub.call("GET", "/v1/assets", { key: null });
      expect(refused.status).toBe(401);
      expect((await pub.call("GET", refused.body.type, { key: null })).status).toBe(200);
      expect((await pub.call("GET", "/problems", { key: null })).status).toBe(200);
    } finally {
      await pub.close();
    }
  });
});

type Doc = {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { examples?: Record<string, { $ref: string }> }> }> }>>;
  components: { examples: Record<string, { value: { type: string; status: number; code: string; detail: string } }> };
};

describe("the OpenAPI document", () => {
  it("lists, under each error status of every operation, a named example of each code of that status", async () => {
    const doc = (await openApiDocument()) as Doc;
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          const media = response.content?.["application/problem+json"];
          if (!media) continue;
          const where = `${method.toUpperCase()} ${path} ${status}`;
          const examples = media.examples ?? {};
          expect(Object.keys(examples).sort(), where).toEqual(problemCodes.filter((c) => problemStatus(c) === Number(status)).sort());
          for (const [code, ref] of Object.entries(examples)) {
            const value = doc.components.examples[ref.$ref.replace("#/components/examples/", "")]?.value;
            expect(value, `${where} ${code}`).toMatchObject({ type: `/problems/${code}`, status: Number(status), code });
            expect(value!.detail).not.toMatch(GENERIC);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it("gives every schema with a pattern an example (else docs tools show strings generated from the regex)", async () => {
    const missing: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}/${i}`));
      if (node === null || typeof node !== "object") return;
      const o = node as Record<string, unknown>;
      if (typeof o.pattern === "string" && o.example === undefined && o.examples === undefined) missing.push(at);
      for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`);
    };
    walk(await openApiDocument(), "#");
    expect(missing).toEqual([]);
  });
});

/**
 * A real answer: a problem of this code whose detail names each of `names` (the field, value or
 * limit at fault), says more than the title, and whose type resolves to its page.
 */
async function specific(res: ApiResponse, code: ProblemCode, ...names: Array<string | RegExp>): Promise<void> {
  expect(res.status, JSON.stringify(res.body)).toBe(problemStatus(code));
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: `/problems/${code}`, code, status: problemStatus(code) });
  const detail = res.body.detail as string;
  expect(detail).not.toMatch(GENERIC);
  expect(detail.toLowerCase()).not.toBe(res.body.title.toLowerCase());
  for (const name of names) {
    if (typeof name === "string") expect(detail).toContain(name);
    else expect(detail).toMatch(name);
  }
  expect((await t.api.call("GET", res.body.type, { key: null })).status).toBe(200);
}

describe("real answers name what to fix", () => {
  const transfer = (amount: unknown, options: { idempotencyKey?: string | null } = {}) =>
    t.api.call("POST", "/v1/transfers", {
      key: t.w.keys.m1,
      body: { legs: [{ debit_account_id: t.w.m1Customer.id, credit_account_id: t.w.m1Fees.id, amount }] },
      ...options,
    });

  it("invalid_request: the field and what is wrong with it", async () => {
    const res = await transfer(1.5);
    await specific(res, "invalid_request", "legs.0.amount", "string");
    expect(res.body.errors).toEqual([expect.objectContaining({ path: "legs.0.amount" })]);
  });

  it("invalid_request for an unknown query parameter: the parameter and those the route takes", async () => {
    await specific(await t.api.call("GET", "/v1/assets?colour=red"), "invalid_request", "colour", "limit");
  });

  it("malformed_json: where the JSON breaks", async () => {
    const res = await t.api.call("POST", "/v1/transfers", { key: t.w.keys.m1, raw: '{\n  "legs": []\n  "metadata": {}\n}' });
    await specific(res, "malformed_json", /line 3, column 3/);
  });

  it("not_found and method_not_allowed: the path, and the methods it takes", async () => {
    await specific(await t.api.call("GET", "/v1/acounts"), "not_found", "GET /v1/acounts");
    const res = await t.api.call("DELETE", "/v1/assets");
    await specific(res, "method_not_allowed", "GET, POST", "DELETE");
    expect(res.headers.get("allow")).toBe("GET, POST");
  });

  it("account_not_found: the id", async () => {
    const id = "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e";
    await specific(await t.api.call("GET", `/v1/accounts/${id}`), "account_not_found", id);
  });

  it("idempotency_key_required and idempotency_key_reused: the header, and the key", async () => {
    await specific(await transfer("1", { idempotencyKey: null }), "idempotency_key_required", "Idempotency-Key");
    const key = `problem-details-${Math.random().toString(36).slice(2)}`;
    expectStatus(await transfer("1", { idempotencyKey: key }), 201);
    await specific(await transfer("2", { idempotencyKey: key }), "idempotency_key_reused", key, "new key");
  });

  it("unauthorized: how to send a key, or that the key is unknown", async () => {
    await specific(await t.api.call("GET", "/v1/assets", { key: null }), "unauthorized", "Authorization: Bearer");
    await specific(await t.api.call("GET", "/v1/assets", { key: "lk_0000000000000000_nope" }), "unauthorized", "unknown or revoked");
  });

  it("forbidden: the caller's role and the roles that may", async () => {
    const res = await t.api.call("POST", "/v1/assets", { key: t.w.keys.o1, body: { code: "EURC", scale: 6, settlement: { kind: "offchain" } } });
    await specific(res, "forbidden", "operator", "admin");
  });

  it("payload_too_large and unsupported_media_type: the limit, and the media type sent", async () => {
    const big = await t.api.call("POST", "/v1/transfers", { key: t.w.keys.m1, raw: JSON.stringify({ pad: "x".repeat(1_100_000) }) });
    await specific(big, "payload_too_large", "1048576 bytes");
    const form = await t.api.call("POST", "/v1/transfers", {
      key: t.w.keys.m1,
      raw: "legs=1",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    await specific(form, "unsupported_media_type", "application/x-www-form-urlencoded", "application/json");
  });

  it("exceeds_credits (insufficient funds): the account, what is available, what the transfer takes and what is missing", async () => {
    const res = await transfer("1000000000000");
    await specific(res, "exceeds_credits", t.w.m1Customer.id, /\d+ available/, "1000000000000", /\d+ short/);
  });

  it("usage_in_future: the period's end", async () => {
    const end = new Date(Date.now() + 2 * 86_400_000);
    const res = await t.api.call("POST", "/v1/usage", {
      key: t.w.keys.m1,
      body: t.w.usage("problem-details-future", { period_start: new Date(end.getTime() - 3_600_000).toISOString(), period_end: end.toISOString() }),
    });
    await specific(res, "usage_in_future", end.toISOString(), "5 minutes");
  });

  it("asset_not_found: the asset named", async () => {
    const res = await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage("problem-details-asset", { asset: "NOPE" }) });
    await specific(res, "asset_not_found", "NOPE");
  });

  it("rate_limited: how long to wait, as Retry-After says", async () => {
    const limited = await testApi({ db: t.api.db, rateLimiter: new RateLimiter(1, 1, () => 0) });
    try {
      expectStatus(await limited.call("GET", "/v1/assets", { key: t.w.keys.finance }), 200);
      const res = await limited.call("GET", "/v1/assets", { key: t.w.keys.finance });
      await specific(res, "rate_limited", `retry in ${res.headers.get("retry-after")} s`);
    } finally {
      await limited.close();
    }
  });
});
