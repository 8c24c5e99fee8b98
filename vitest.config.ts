import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    // The browser tests need Chromium: `npm run test:browser` (vitest.browser.config.ts) runs them.
    exclude: [...configDefaults.exclude, "tests/browser/**"],
    globalSetup: ["tests/support/global-setup.ts"],
    setupFiles: ["tests/support/each-file.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The files of a worker share one module graph: the service's modules (viem, the routes, the
    // OpenAPI document) are evaluated once per worker instead of once per file, which took about a
    // third of the suite's time. The files keep no state in shared modules (no mocks, no stubbed
    // globals or environment; each opens and closes its own database and service); the one piece of
    // shared state, the test clock, starts again before each file (setupFiles), so that in the
    // calendar runs (CLOCK_START) each file's clock starts at the instant when the file does.
    isolate: false,
    // Test files spend much of their time waiting on PostgreSQL and the local chain: two at a time
    // even on two cores (the default, one fewer than the cores, would run them one by one there).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
