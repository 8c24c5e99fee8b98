import { readFileSync } from "node:fs";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageMonth } from "../support/clock.js";
import { launchChromium, screenshots, seriousViolations, serveOnLoopback, signedIn } from "../support/browser.js";
import { expectStatus, worldPerFile } from "../support/http.js";

/**
 * The console in a real browser (Debian's Chromium): each role signs in and sees what the API lets
 * it see, and the API's refusal for the rest; four eyes across two browser sessions; a CSV equal to
 * the API's; a chart whose points are the API's numbers; CSRF and the cookie's attributes.
 */

const t = worldPerFile();
let browser: Browser;
let origin: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  const served = await serveOnLoopback(t.api);
  origin = served.origin;
  stop = served.close;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await stop?.();
});

const period = `from=${usageMonth.from.toISOString()}&to=${usageMonth.to.toISOString()}`;

describe("the console in Chromium", () => {
  it("signs in with a key kept in an HttpOnly, SameSite=Strict cookie that does not hold the key in clear", async () => {
    const { context, page } = await signedIn(browser, origin, t.w.keys.finance);
    await screenshots(page, "home-finance");
    const [cookie] = (await context.cookies()).filter((c) => c.name.startsWith("ledger_console_") && !c.name.endsWith("_signin"));
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", secure: false, path: "/console" });
    expect(cookie!.value).not.toContain(t.w.keys.finance);
    expect(await page.evaluate("document.cookie")).toBe("");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${origin}/console/sign-in`);
    await page.goto(`${origin}/console/trial-balance`);
    expect(page.url()).toBe(`${origin}/console/sign-in`);
    // A copy of the cookie taken before signing out opens nothing either.
    const copied = await fetch(`${origin}/console/trial-balance`, { headers: { cookie: `${cookie!.name}=${cookie!.value}` }, redirect: "manual" });
    expect([302, 303]).toContain(copied.status);
    expect(copied.headers.get("location")).toMatch(/\/console\/sign-in/);
    await screenshots(page, "sign-in");
    await context.close();
  });

  it("finance: every finance page, the trial balance as the API's, and its CSV equal to the API's CSV", async () => {
    const { context, page } = await signedIn(browser, origin, t.w.keys.finance);
    for (const [path, name] of [
      ["/console/fee-revenue?" + period, "fee-revenue"],
      ["/console/payouts", "payouts"],
      ["/console/proposals?status=approved", "proposals"],
      ["/console/reconciliations", "reconciliations"],
      ["/console/treasury", "treasury"],
      ["/console/audit", "audit-log"],
      [`/console/earnings?operator=o1&${period}`, "earnings-o1-as-finance"],
    ] as const) {
      const res = await page.goto(`${origin}${path}`);
      expect(res!.status(), path).toBe(200);
      await screenshots(page, name);
    }
    await page.goto(`${origin}/console/trial-balance`);
    await screenshots(page, "trial-balance");
    const api = expectStatus(await t.api.call("GET", "/v1/reports/trial-balance", { key: t.w.keys.finance }), 200).body;
    const payable = api.accounts.find((a: { ref: string }) => a.ref === "operator:o1:payable");
    const row = page.getByRole("row").filter({ hasText: "operator:o1:payable" });
    await expect(row.getByRole("cell").last().textContent()).resolves.toBe(payable.balance_display);

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: /Download “Accounts” as CSV/ }).click()]);
    const csv = readFileSync((await download.path())!, "utf8");
    const apiCsv = await t.api.call("GET", "/v1/reports/trial-balance?format=csv", { key: t.w.keys.finance });
    expect(csv).toBe(apiCsv.body);
    expect(csv.split("\r\n")[0]).toContain("balance");
    await context.close();
  });

  it("four eyes: a finance key cannot approve its own proposal in the console; a second finance key's session can", async () => {
    const receipt = expectStatus(
      await t.api.call("POST", "/v1/marketplaces/m1/receipts", {
        key: t.w.keys.finance,
        body: { asset: "USDC", amount: "2500000", reference: "console four eyes" },
      }),
      201,
    ).body;
    const first = await signedIn(browser, origin, t.w.keys.finance);
    await first.page.goto(`${origin}/console/proposals`);
    const row = first.page.getByRole("row").filter({ hasText: receipt.id });
    await screenshots(first.page, "proposals-pending");
    await row.getByRole("button", { name: "Approve" }).click();
    await expect(first.page.getByRole("alert").textContent()).resolves.toContain("403");
    expect(await first.page.getByRole("alert").textContent()).toContain("four_eyes");
    await first.context.close();

    const controller = expectStatus(await t.api.call("POST", "/v1/api-keys", { body: { name: "controller", role: "finance" } }), 201).body.secret as string;
    const second = await signedIn(browser, origin, controller);
    await second.page.goto(`${origin}/console/proposals`);
    const again = second.page.getByRole("row").filter({ hasText: receipt.id });
    await again.getByLabel("Reason").first().fill("matches the bank statement");
    await again.getByRole("button", { name: "Approve" }).click();
    await second.page.waitForURL(/done=approved/);
    expect(await second.page.getByRole("status").textContent()).toContain("Approved");
    const decided = expectStatus(await t.api.call("GET", `/v1/proposals/${receipt.id}`, { key: t.w.keys.finance }), 200).body;
    expect(decided).toMatchObject({ status: "approved", reason: "matches the bank statement" });
    await second.context.close();
  });

  it("marketplace: its customers and balances, not another marketplace's; the finance pages answer the API's 403", async () => {
    const { context, page } = await signedIn(browser, origin, t.w.keys.m1);
    for (const [path, name] of [
      ["/console/customers", "customers"],
      ["/console/usage", "usage"],
      ["/console/fee-schedules", "fee-schedules"],
    ] as const) {
      expect((await page.goto(`${origin}${path}`))!.status(), path).toBe(200);
      await screenshots(page, name);
    }
    await page.goto(`${origin}/console/customers`);
    const balance = expectStatus(await t.api.call("GET", "/v1/customers/c1/balance", { key: t.w.keys.m1 }), 200).body.data[0];
    const c1 = page.locator("#customer-balances tbody tr").filter({ hasText: "c1" });
    await expect(c1.locator("td").nth(6).textContent()).resolves.toBe(balance.available_display);
    expect(await page.locator("#customer-balances").textContent()).not.toContain("m2");
    const refused = await page.goto(`${origin}/console/trial-balance`);
    expect(refused!.status()).toBe(403);
    expect(await page.getByRole("alert").textContent()).toContain("a marketplace key may not do this");
    await screenshots(page, "refused-marketplace-trial-balance");
    expect((await page.goto(`${origin}/console/fee-schedules?marketplace=m2`))!.status()).toBe(200); // its own, whatever it names
    expect(await page.locator("h1").textContent()).toBe("Fee schedules of m1");
    await context.close();
  });

  it("operator: balances and a chart whose points are the API's numbers; other tenants' pages refused", async () => {
    // Three days of usage, two resources at two prices: points that differ.
    for (const [id, extra] of [
      [
        "console-a100",
        { resource: "gpu:a100-40gb", quantity: "7200", period_start: usageMonth.day(10, 12).toISOString(), period_end: usageMonth.day(12, 12).toISOString() },
      ],
      ["console-h100", { unit_price: "0.001", period_start: usageMonth.day(10, 13).toISOString(), period_end: usageMonth.day(11, 13).toISOString() }],
    ] as const)
      expectStatus(await t.api.call("POST", "/v1/usage", { key: t.w.keys.m1, body: t.w.usage(id, extra) }), 201);
    const { context, page } = await signedIn(browser, origin, t.w.keys.o1);
    expect((await page.goto(`${origin}/console/earnings?${period}`))!.status()).toBe(200);
    await screenshots(page, "earnings");
    const api = expectStatus(await t.api.call("GET", `/v1/operators/o1/earnings?${period}&group_by=day`, { key: t.w.keys.o1 }), 200).body.data;
    const points = await page
      .locator("#chart-net .point")
      .evaluateAll((els) => els.map((el) => ({ x: el.getAttribute("data-x"), units: el.getAttribute("data-units") })));
    expect(points).toEqual(api.map((r: { group: string; net: string }) => ({ x: r.group, units: r.net })));
    expect(points).toHaveLength(3);
    const byResource = expectStatus(await t.api.call("GET", `/v1/operators/o1/earnings?${period}&group_by=day&by_resource=true`, { key: t.w.keys.o1 }), 200)
      .body.data;
    const rates = await page
      .locator("#chart-rate .point")
      .evaluateAll((els) => els.map((el) => `${el.getAttribute("data-series")} ${el.getAttribute("data-x")} ${el.getAttribute("data-units")}`));
    expect(rates.sort()).toEqual(
      byResource
        .map((r: { resource: string; group: string; effective_rate_per_hour_units: string }) => `${r.resource} ${r.group} ${r.effective_rate_per_hour_units}`)
        .sort(),
    );
    const balances = expectStatus(await t.api.call("GET", "/v1/operators/o1/balances", { key: t.w.keys.o1 }), 200).body.data[0];
    expect(await page.locator(".cards").textContent()).toContain(balances.payable_now_display);
    for (const [path, name] of [
      [`/console/statement?${period}`, "statement"],
      ["/console/payouts", "payouts-operator"],
    ] as const) {
      expect((await page.goto(`${origin}${path}`))!.status(), path).toBe(200);
      await screenshots(page, name);
    }
    expect((await page.goto(`${origin}/console/customers`))!.status()).toBe(403);
    expect((await page.goto(`${origin}/console/audit`))!.status()).toBe(403);
    await context.close();
  });

  it("usage batches: a marketplace sees its batch's refused records with the reasons and their CSV; another marketplace does not", async () => {
    const records = [
      t.w.usage("console-batch-ok"),
      { ...t.w.usage("console-batch-qty"), quantity: "-5" },
      t.w.usage("console-batch-op", { operator_id: "no-such-operator" }),
    ];
    const posted = expectStatus(await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body: { records } }), 200).body;
    const api = expectStatus(await t.api.call("GET", `/v1/usage-batches/${posted.batch_id}`, { key: t.w.keys.m1 }), 200).body;
    const { context, page } = await signedIn(browser, origin, t.w.keys.m1);
    expect((await page.goto(`${origin}/console/usage-batches`))!.status()).toBe(200);
    await screenshots(page, "usage-batches");
    const row = page.locator("#usage-batches tbody tr").filter({ hasText: posted.batch_id });
    await expect(row.locator("td").nth(5).textContent()).resolves.toBe("2");
    await row.getByRole("link").first().click();
    await page.waitForURL(`${origin}/console/usage-batches/${posted.batch_id}`);
    await screenshots(page, "usage-batch");
    const shown = await page.locator("#rejections tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
    expect(shown).toEqual(
      api.rejections.data.map((r: { index: number; external_id: string; code: string; field: string | null; reason: string }) => [
        String(r.index),
        r.external_id,
        r.code,
        r.field ?? "",
        r.reason,
      ]),
    );
    expect(shown.map((r) => r[1])).toEqual(["console-batch-qty", "console-batch-op"]);
    expect(shown[1]![4]).toContain("no-such-operator");
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: /Download “Refused records” as CSV/ }).click()]);
    const csv = readFileSync((await download.path())!, "utf8").split("\r\n");
    expect(csv[0]).toBe("index,external_id,code,field,reason");
    expect(csv[2]).toContain("no-such-operator");
    await context.close();

    const other = await signedIn(browser, origin, t.w.keys.m2);
    await other.page.goto(`${origin}/console/usage-batches`);
    expect(await other.page.locator("#usage-batches").textContent()).not.toContain(posted.batch_id);
    const refused = await other.page.goto(`${origin}/console/usage-batches/${posted.batch_id}`);
    expect(refused!.status()).toBe(404);
    expect(await other.page.getByRole("alert").textContent()).toContain("usage_batch_not_found");
    await other.context.close();
  });

  it("accessibility: axe finds no serious or critical violation on any page of any role", async () => {
    const batch = expectStatus(
      await t.api.call("POST", "/v1/usage/batch", { key: t.w.keys.m1, body: { records: [t.w.usage("console-axe", { customer_id: "nobody" })] } }),
      200,
    ).body.batch_id as string;
    const pages: Record<string, string[]> = {
      finance: [
        "/console",
        "/console/trial-balance",
        "/console/fee-revenue?" + period,
        "/console/payouts",
        "/console/proposals",
        "/console/reconciliations",
        "/console/treasury",
        "/console/audit",
        "/console/usage-batches",
        `/console/usage-batches/${batch}`,
        `/console/earnings?operator=o1&${period}`,
        "/console/customers?marketplace=m1",
      ],
      m1: [
        "/console",
        "/console/customers",
        "/console/usage",
        "/console/usage-batches",
        `/console/usage-batches/${batch}`,
        "/console/fee-schedules",
        "/console/trial-balance",
      ],
      o1: ["/console", `/console/earnings?${period}`, `/console/statement?${period}`, "/console/payouts"],
    };
    const found: string[] = [];
    for (const [who, paths] of Object.entries(pages)) {
      const { context, page } = await signedIn(browser, origin, t.w.keys[who as "finance" | "m1" | "o1"], { bypassCSP: true });
      for (const path of paths) {
        await page.goto(`${origin}${path}`);
        found.push(...(await seriousViolations(page)).map((v) => `${who} ${path}: ${v}`));
      }
      await context.close();
    }
    const anonymous = await browser.newContext({ bypassCSP: true });
    const signIn = await anonymous.newPage();
    await signIn.goto(`${origin}/console/sign-in`);
    found.push(...(await seriousViolations(signIn)).map((v) => `sign-in: ${v}`));
    await anonymous.close();
    expect(found).toEqual([]);
    // The checker itself: a page made with an image without text is a critical violation.
    const probe = await browser.newPage();
    await probe.setContent('<!doctype html><html lang="en"><head><title>probe</title></head><body><main><img src="data:,"></main></body></html>');
    expect((await seriousViolations(probe)).join("\n")).toContain("image-alt");
    await probe.close();
  }, 300_000);

  it("CSRF: a POST without the session's token, or from another origin, is refused and changes nothing", async () => {
    const receipt = expectStatus(
      await t.api.call("POST", "/v1/marketplaces/m2/receipts", {
        key: t.w.keys.finance,
        body: { asset: "USDC", amount: "1000000", reference: "console csrf" },
      }),
      201,
    ).body;
    const controller = expectStatus(await t.api.call("POST", "/v1/api-keys", { body: { name: "controller 2", role: "finance" } }), 201).body.secret as string;
    const { context, page } = await signedIn(browser, origin, controller);
    const without = await page.request.post(`${origin}/console/proposals/${receipt.id}/approve`, { form: { reason: "no token" } });
    expect(without.status()).toBe(403);
    await page.goto(`${origin}/console/proposals`);
    const token = await page.locator('input[name="csrf"]').first().getAttribute("value");
    const foreign = await page.request.post(`${origin}/console/proposals/${receipt.id}/approve`, {
      form: { csrf: token!, reason: "cross-site" },
      headers: { origin: "http://evil.example" },
    });
    expect(foreign.status()).toBe(403);
    expect(expectStatus(await t.api.call("GET", `/v1/proposals/${receipt.id}`, { key: t.w.keys.finance }), 200).body.status).toBe("proposed");
    await context.close();
  });
});
