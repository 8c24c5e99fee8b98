import { describe, expect, it } from "vitest";
import { ByteAdmission } from "../../src/http/batch-admission.js";

const tick = () => new Promise((r) => setImmediate(r));

describe("batch admission by body bytes", () => {
  it("admits batches while their bytes fit, queues the rest in arrival order, and admits them as bytes come back", async () => {
    const a = new ByteAdmission(100);
    const first = await a.acquire(60);
    const second = await a.acquire(40);
    expect(a.bytesInFlight).toBe(100);
    const order: string[] = [];
    const third = a.acquire(30).then((r) => (order.push("third"), r));
    const fourth = a.acquire(10).then((r) => (order.push("fourth"), r));
    await tick();
    expect(order).toEqual([]); // the small one does not overtake the one that waits before it
    first();
    first(); // giving back twice counts once
    const [r3, r4] = await Promise.all([third, fourth]);
    expect(order).toEqual(["third", "fourth"]);
    expect(a.bytesInFlight).toBe(80);
    second();
    r3();
    r4();
    expect(a.bytesInFlight).toBe(0);
  });

  it("admits a batch larger than the budget when nothing else is in flight, and it then waits for it", async () => {
    const a = new ByteAdmission(100);
    const big = await a.acquire(500);
    let small = false;
    const next = a.acquire(1).then((r) => ((small = true), r));
    await tick();
    expect(small).toBe(false);
    big();
    (await next)();
    expect(small).toBe(true);
    expect(a.bytesInFlight).toBe(0);
  });
});
