/**
 * Cooperative scheduling for large requests. The service is one event loop: a 10,000-record batch
 * checked, hashed and rated in one go would hold every other tenant's requests for the whole of it.
 * Loops over a batch's records call `giveWay()` every `batchTuning.yieldEvery` records, which lets
 * the requests waiting on the event loop run (a macrotask turn, after pending I/O). The cost is
 * not measurable in the batch's time; `npm run bench:batch-stall` varies the interval
 * (docs/performance.md, "One batch, other tenants").
 */
export const batchTuning = { yieldEvery: 250 };

export const giveWay = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** Gives way when `i` (a loop index from 0) is a positive multiple of the interval. */
export function maybeGiveWay(i: number): Promise<void> | undefined {
  return i > 0 && i % batchTuning.yieldEvery === 0 ? giveWay() : undefined;
}
