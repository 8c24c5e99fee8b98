import { defineConfig } from "vitest/config";

/**
 * The browser tests (tests/browser): the console driven by Debian's Chromium through
 * playwright-core. Apart from `npm test` so that it runs on a machine without Chromium;
 * `npm run test:browser` (and .ci/run, which installs Chromium) runs them.
 */
export default defineConfig({
  test: {
    include: ["tests/browser/**/*.test.ts"],
    globalSetup: ["tests/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 1,
  },
});
