import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    // The browser tests need Chromium: `npm run test:browser` (vitest.browser.config.ts) runs them.
    exclude: [...configDefaults.exclude, "tests/browser/**"],
    globalSetup: ["tests/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Test files spend much of their time waiting on PostgreSQL and the local chain: two at a time
    // even on two cores (the default, one fewer than the cores, would run them one by one there).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
