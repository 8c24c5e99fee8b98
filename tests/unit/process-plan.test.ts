import { describe, expect, it } from "vitest";
import { processPlan } from "../../src/cluster.js";

describe("the processes one npm start runs", () => {
  const base = { API_PROCESSES: 1, WORKER_PROCESSES: undefined, RUN_WORKERS: "true" as const, READ_PROCESSES: 0 };

  it("is one unsupervised process (workers inside) unless asked for more", () => {
    expect(processPlan(base)).toBeUndefined();
    expect(processPlan({ ...base, RUN_WORKERS: "false" })).toBeUndefined();
  });

  it("with several API processes, runs one worker process unless told otherwise", () => {
    expect(processPlan({ ...base, API_PROCESSES: 3 })).toEqual({ api: 3, workers: 1, reads: 0 });
    expect(processPlan({ ...base, API_PROCESSES: 3, RUN_WORKERS: "false" })).toEqual({ api: 3, workers: 0, reads: 0 });
    expect(processPlan({ ...base, API_PROCESSES: 2, WORKER_PROCESSES: 2 })).toEqual({ api: 2, workers: 2, reads: 0 });
  });

  it("supervises one API process when worker or read processes are asked for", () => {
    expect(processPlan({ ...base, WORKER_PROCESSES: 1 })).toEqual({ api: 1, workers: 1, reads: 0 });
    expect(processPlan({ ...base, READ_PROCESSES: 1 })).toEqual({ api: 1, workers: 1, reads: 1 });
  });
});
