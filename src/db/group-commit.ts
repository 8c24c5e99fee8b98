import { isDatabaseUnavailable } from "./client.js";

/**
 * Coalesces concurrent single writes into batches (group commit, as TigerBeetle does): callers
 * `submit` one item and await their own result; the committer flushes whatever has queued as one
 * batch as soon as a flush slot is free. Under light load a batch is one item and adds no delay;
 * under heavy load batches grow up to `maxItems`, so one commit serves many callers.
 */
export interface GroupCommitOptions {
  /** Largest batch handed to the flush function. */
  maxItems: number;
  /** Flushes allowed in flight at once (each is one database transaction). */
  maxConcurrent: number;
  /** Extra time to wait for more items before flushing; 0 flushes on the next turn of the event loop. */
  windowMs: number;
}

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (reason: unknown) => void;
}

export class GroupCommitter<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private closed = false;
  private idle: (() => void)[] = [];

  constructor(
    private readonly flushBatch: (items: I[]) => Promise<O[]>,
    private readonly options: GroupCommitOptions,
  ) {}

  submit(item: I): Promise<O> {
    if (this.closed) return Promise.reject(Object.assign(new Error("the group committer is closed (the process is stopping)"), { code: "STOPPING" }));
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Stops accepting items, flushes what is queued, and waits for every flush to finish. */
  async close(): Promise<void> {
    this.closed = true;
    this.pump();
    if (this.queue.length === 0 && this.inFlight === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.pump();
    };
    if (this.options.windowMs > 0) setTimeout(run, this.options.windowMs);
    else setImmediate(run);
  }

  /**
   * Flushes one batch. If it fails as a whole (an error that is not a per-item result, e.g. a value
   * the database rejects), its items are flushed again one by one, so that one bad item cannot fail
   * the others that happened to share its transaction. Not when the database is unreachable: then
   * every item fails at once (one by one, each would wait for a reconnect in turn).
   */
  private async flush(batch: Waiting<I, O>[]): Promise<void> {
    let results: O[];
    try {
      results = await this.flushBatch(batch.map((w) => w.item));
    } catch (err) {
      if (batch.length === 1 || isDatabaseUnavailable(err)) return batch.forEach((w) => w.reject(err));
      for (const [i, w] of batch.entries()) {
        try {
          const [result] = await this.flushBatch([w.item]);
          w.resolve(result!);
        } catch (itemErr) {
          if (isDatabaseUnavailable(itemErr)) return batch.slice(i).forEach((rest) => rest.reject(itemErr));
          w.reject(itemErr);
        }
      }
      return;
    }
    // A flush that committed but answered the wrong number of results is a bug: never flushed again.
    if (results.length !== batch.length) {
      const err = new Error(`flush returned ${results.length} results for ${batch.length} items`);
      return batch.forEach((w) => w.reject(err));
    }
    batch.forEach((w, i) => w.resolve(results[i]!));
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < this.options.maxConcurrent) {
      const batch = this.queue.splice(0, this.options.maxItems);
      this.inFlight++;
      void this.flush(batch).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0) this.pump();
        else if (this.inFlight === 0) this.idle.splice(0).forEach((resolve) => resolve());
      });
    }
  }
}
