/**
 * Cooperative scheduling for large requests. The service is one event loop: a 10,000-record batch
 * checked, hashed and rated in one go would hold every other tenant's requests for the whole of it.
 * Loops over a batch's records call `giveWay()` every `batchTuning.yieldEvery` records, which lets
 * the requests waiting on the event loop run (a macrotask turn, after pending I/O). The cost is
 * not measurable in the batch's time; `npm run bench:batch-stall` varies the interval
 * (docs/performance.md, "One batch, other tenants").
 */
export const batchTuning = { yieldEvery: 250 };

/**
 * Requests that gave way, in order; one goes on per turn of the event loop, so that the I/O of the
 * others (a read's answer from PostgreSQL, a new request) is taken between every two slices of
 * batch work. With `setImmediate(resolve)` alone, every batch that gave way in one turn ran its
 * next slice in the same turn, one after the other, and a read waited for all of them at each of
 * its round trips to PostgreSQL.
 */
const waiting: (() => void)[] = [];
let turnScheduled = false;

function nextTurn(): void {
  const resolve = waiting.shift();
  // Queued from inside a turn's immediates, it runs at the next turn, after that turn's I/O.
  if (waiting.length > 0) setImmediate(nextTurn);
  else turnScheduled = false;
  resolve?.();
}

export const giveWay = (): Promise<void> =>
  new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (!turnScheduled) {
      turnScheduled = true;
      setImmediate(nextTurn);
    }
  });

/** Gives way when `i` (a loop index from 0) is a positive multiple of the interval. */
export function maybeGiveWay(i: number): Promise<void> | undefined {
  return i > 0 && i % batchTuning.yieldEvery === 0 ? giveWay() : undefined;
}
