import { describe, expect, it } from "vitest";
import { isUuid, uuidv7 } from "../../src/domain/ids.js";

describe("uuidv7", () => {
  it("carries the milliseconds, version 7 and the RFC 9562 variant", () => {
    const ms = Date.UTC(2026, 10, 29, 12, 0, 0, 123);
    const id = uuidv7(ms);
    expect(isUuid(id)).toBe(true);
    expect(BigInt(`0x${id.replace(/-/g, "").slice(0, 12)}`)).toBe(BigInt(ms));
    expect(id[14]).toBe("7");
    expect("89ab").toContain(id[19]);
  });

  it("never repeats, across many refills of its random pool, even within one millisecond", () => {
    const ids = Array.from({ length: 50_000 }, () => uuidv7(1_000));
    expect(new Set(ids).size).toBe(ids.length);
    // The random part is not a counter: consecutive ids differ in many bits.
    const tail = (id: string) => BigInt(`0x${id.replace(/-/g, "").slice(16)}`);
    const differing = (a: bigint, b: bigint) => (a ^ b).toString(2).replace(/0/g, "").length;
    expect(differing(tail(ids[0]!), tail(ids[1]!))).toBeGreaterThan(10);
  });
});
