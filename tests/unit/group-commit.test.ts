import { describe, expect, it } from "vitest";
import { GroupCommitter } from "../../src/db/group-commit.js";

/** A flush that records the batches it sees (a fake with a counter, not a mock). */
function recorder(delayMs = 5) {
  const batches: number[][] = [];
  let concurrent = 0;
  let maxConcurrent = 0;
  const flush = async (items: number[]) => {
    concurrent++;
    maxConcurrent = Math.max(maxConcurrent, concurrent);
    batches.push(items);
    await new Promise((r) => setTimeout(r, delayMs));
    concurrent--;
    return items.map((i) => i * 10);
  };
  return { batches, flush, maxConcurrent: () => maxConcurrent };
}

describe("group commit", () => {
  it("coalesces concurrent submissions and gives each caller its own result", async () => {
    const r = recorder();
    const gc = new GroupCommitter(r.flush, { maxItems: 100, maxConcurrent: 1, windowMs: 0 });
    const results = await Promise.all(Array.from({ length: 250 }, (_, i) => gc.submit(i)));
    expect(results).toEqual(Array.from({ length: 250 }, (_, i) => i * 10));
    expect(r.batches.length).toBeLessThanOrEqual(4);
    expect(Math.max(...r.batches.map((b) => b.length))).toBeLessThanOrEqual(100);
    expect(r.batches.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 250 }, (_, i) => i));
  });

  it("keeps at most maxConcurrent flushes in flight", async () => {
    const r = recorder(10);
    const gc = new GroupCommitter(r.flush, { maxItems: 3, maxConcurrent: 2, windowMs: 0 });
    await Promise.all(Array.from({ length: 30 }, (_, i) => gc.submit(i)));
    expect(r.maxConcurrent()).toBe(2);
  });

  it("rejects the callers whose items fail, and carries on", async () => {
    let down = true;
    const gc = new GroupCommitter(
      async (items: number[]) => {
        if (down) throw new Error("database down");
        return items;
      },
      { maxItems: 10, maxConcurrent: 1, windowMs: 0 },
    );
    const first = await Promise.allSettled([gc.submit(1), gc.submit(2)]);
    expect(first.map((s) => s.status)).toEqual(["rejected", "rejected"]);
    down = false;
    await expect(gc.submit(3)).resolves.toBe(3);
  });

  it("isolates an item that fails a whole batch: the others still get their results", async () => {
    const gc = new GroupCommitter(
      async (items: number[]) => {
        if (items.includes(13)) throw new Error("the database rejects 13");
        return items.map((i) => i * 10);
      },
      { maxItems: 10, maxConcurrent: 1, windowMs: 0 },
    );
    const results = await Promise.allSettled([gc.submit(1), gc.submit(13), gc.submit(2)]);
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : "rejected"))).toEqual([10, "rejected", 20]);
  });

  it("flushes what is queued on close and then refuses new items", async () => {
    const r = recorder(20);
    const gc = new GroupCommitter(r.flush, { maxItems: 10, maxConcurrent: 1, windowMs: 50 });
    const pending = [gc.submit(1), gc.submit(2)];
    await gc.close();
    await expect(Promise.all(pending)).resolves.toEqual([10, 20]);
    await expect(gc.submit(3)).rejects.toThrow(/closed/);
  });

  it("fails every item of a batch at once when the database is unreachable (no item-by-item retry)", async () => {
    const calls: number[][] = [];
    const gc = new GroupCommitter<number, number>(
      async (items) => {
        calls.push(items);
        await new Promise((r) => setTimeout(r, 5));
        throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
      },
      { maxItems: 100, maxConcurrent: 1, windowMs: 5 },
    );
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => gc.submit(i)));
    expect(results.every((r) => r.status === "rejected" && (r.reason as { code: string }).code === "ECONNREFUSED")).toBe(true);
    expect(calls).toHaveLength(1);
  });

  it("stops retrying item by item once the database goes away, failing the rest with that error", async () => {
    let calls = 0;
    const gc = new GroupCommitter<number, number>(
      async (items) => {
        calls++;
        if (items.length > 1) throw new Error("a value the database rejects");
        if (calls > 3) throw Object.assign(new Error("closed"), { code: "CONNECTION_CLOSED" });
        return items.map((i) => i * 10);
      },
      { maxItems: 100, maxConcurrent: 1, windowMs: 5 },
    );
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => gc.submit(i)));
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as { code: string }).code))).toEqual([
      0,
      10,
      ...Array.from({ length: 8 }, () => "CONNECTION_CLOSED"),
    ]);
    expect(calls).toBe(4);
  });

  it("refuses items after close with a code the API answers as 503 (retry later)", async () => {
    const gc = new GroupCommitter<number, number>(async (items) => items, { maxItems: 10, maxConcurrent: 1, windowMs: 0 });
    await gc.close();
    await expect(gc.submit(1)).rejects.toMatchObject({ code: "STOPPING" });
  });

  it("never flushes again a batch whose flush answered the wrong number of results (it may have committed)", async () => {
    const calls: number[][] = [];
    const gc = new GroupCommitter<number, number>(
      async (items) => {
        calls.push(items);
        return items.slice(1);
      },
      { maxItems: 10, maxConcurrent: 1, windowMs: 5 },
    );
    const results = await Promise.allSettled([gc.submit(1), gc.submit(2), gc.submit(3)]);
    expect(results.every((r) => r.status === "rejected")).toBe(true);
    expect(calls).toEqual([[1, 2, 3]]);
  });
});
