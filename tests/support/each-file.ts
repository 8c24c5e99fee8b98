import { restartTestClock } from "./clock.js";

// Before each test file (vitest's setupFiles): the files of a worker share one module graph, so the
// test clock, which a file expects to start when the file does, is started again here.
restartTestClock();
