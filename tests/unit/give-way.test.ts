import { createServer, connect } from "node:net";
import { describe, expect, it } from "vitest";
import { giveWay, maybeGiveWay } from "../../src/give-way.js";

/**
 * Batch work gives way every few hundred records; a request that waits on the event loop (a read's
 * answer from PostgreSQL, a new request) must be taken between any two slices of batch work, not
 * after every batch that gave way in the same turn has run its next slice.
 */
describe("giving way", () => {
  it("lets one slice of batch work go on per turn of the event loop, in the order they gave way", async () => {
    const seen: string[] = [];
    let turns = 0;
    let ticking = true;
    // One mark per turn: an immediate queued from an immediate runs at the next turn.
    const tick = () => {
      if (!ticking) return;
      turns++;
      seen.push("|");
      setImmediate(tick);
    };
    setImmediate(tick);
    const batch = async (name: string) => {
      for (let slice = 0; slice < 5; slice++) {
        await giveWay();
        seen.push(name);
      }
    };
    await Promise.all([batch("a"), batch("b"), batch("c")]);
    ticking = false;
    const slices = seen.join("").split("|").filter(Boolean);
    // Never two slices in one turn; all fifteen went, a, b and c taking turns.
    expect(slices.every((s) => s.length === 1)).toBe(true);
    expect(slices.join("")).toBe("abcabcabcabcabc");
    expect(turns).toBeGreaterThanOrEqual(15);
  });

  it("takes a socket's data between two slices of batches that gave way together", async () => {
    // A peer on loopback answers each message at once; the batches give way 200 times each.
    const server = createServer((s) => s.on("data", (d) => s.write(d)));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    try {
      let slicesSinceAnswer = 0;
      let mostSlicesBetweenAnswers = 0;
      let answers = 0;
      socket.on("data", () => {
        answers++;
        mostSlicesBetweenAnswers = Math.max(mostSlicesBetweenAnswers, slicesSinceAnswer);
        slicesSinceAnswer = 0;
        if (answers < 50) socket.write("x");
      });
      socket.write("x");
      const batch = async () => {
        for (let i = 1; i <= 200 * 250; i++) {
          const gave = maybeGiveWay(i);
          if (gave) {
            await gave;
            slicesSinceAnswer++;
            // Each slice keeps the loop busy a little, as rating a few hundred records does.
            const until = performance.now() + 0.2;
            while (performance.now() < until);
          }
        }
      };
      await Promise.all([batch(), batch(), batch(), batch()]);
      expect(answers).toBe(50);
      // An answer waits for at most a couple of slices, not for every batch's (4 or more).
      expect(mostSlicesBetweenAnswers).toBeLessThanOrEqual(3);
    } finally {
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
