import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/** Where Chromium is: CHROMIUM_PATH, or Debian's package (.ci/run installs it). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Where the pages' screenshots go (CI keeps .ci/out as its artifacts). */
export const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS ?? join(".ci", "out", "console");

export const LAPTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export { serveOnLoopback } from "./http.js";

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
}

/**
 * A fresh browser session (its own cookies) signed in with this key; answers the context and its page.
 * `bypassCSP` lets a test inject a checker's script (axe) into the console's pages, whose policy allows none.
 */
export async function signedIn(
  browser: Browser,
  origin: string,
  key: string,
  options: { bypassCSP?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: LAPTOP, acceptDownloads: true, bypassCSP: options.bypassCSP ?? false });
  const page = await context.newPage();
  await page.goto(`${origin}/console/sign-in`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${origin}/console`);
  return { context, page };
}

/** The accessibility violations axe-core finds on the page that are serious or critical, one line each (rule, element). */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: createRequire(import.meta.url).resolve("axe-core") });
  const violations = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)')) as AxeViolation[];
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .flatMap((v) => v.nodes.map((n) => `${v.impact} ${v.id}: ${n.target.join(" ")} (${v.help})`));
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Full-page screenshots of the page at a laptop's and a phone's width. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  for (const [label, size] of [
    ["laptop", LAPTOP],
    ["phone", PHONE],
  ] as const) {
    await page.setViewportSize(size);
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(LAPTOP);
}
