import { describe, expect, it } from "vitest";
import { ReadBatcher } from "../../src/db/read-batcher.js";

describe("ReadBatcher", () => {
  it("answers concurrent reads with one load, each with its own value", async () => {
    const loads: string[][] = [];
    const b = new ReadBatcher(async (keys: string[]) => {
      loads.push(keys);
      return keys.map((k) => (k === "missing" ? undefined : k.toUpperCase()));
    });
    const out = await Promise.all(["a", "b", "missing", "a"].map((k) => b.get(k)));
    expect(out).toEqual(["A", "B", undefined, "A"]);
    expect(loads).toEqual([["a", "b", "missing", "a"]]);
    // Later reads load again: nothing is kept.
    expect(await b.get("a")).toBe("A");
    expect(loads).toHaveLength(2);
  });

  it("fails every read of a load that fails, and recovers for the next", async () => {
    let fail = true;
    const b = new ReadBatcher(async (keys: number[]) => {
      if (fail) throw Object.assign(new Error("connection lost"), { code: "ECONNRESET" });
      return keys.map((k) => k * 2);
    });
    const results = await Promise.allSettled([b.get(1), b.get(2)]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    fail = false;
    expect(await Promise.all([b.get(3), b.get(4)])).toEqual([6, 8]);
  });
});
