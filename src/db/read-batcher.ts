import type { Queryable } from "./client.js";

/**
 * Coalesces concurrent point reads into one statement: `load` gets every key asked for since the
 * last turn of the event loop (requests parsed together, e.g. under load) and returns one value per
 * key, in order. Each caller sees what one query saw at a moment during its request, as with a
 * query of its own; no value is kept after it is answered (no cache, nothing stale).
 */
export class ReadBatcher<K, V> {
  private queue: { key: K; resolve: (v: V) => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;

  constructor(private readonly load: (keys: K[]) => Promise<V[]>) {}

  get(key: K): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      this.queue.push({ key, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    this.scheduled = false;
    try {
      const values = await this.load(batch.map((b) => b.key));
      batch.forEach((b, i) => b.resolve(values[i]!));
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }
}

/** One batcher per database handle and purpose. */
export function batcherFor<K, V>(cache: WeakMap<Queryable, ReadBatcher<K, V>>, db: Queryable, load: (db: Queryable, keys: K[]) => Promise<V[]>): ReadBatcher<K, V> {
  let b = cache.get(db);
  if (!b) {
    b = new ReadBatcher((keys) => load(db, keys));
    cache.set(db, b);
  }
  return b;
}
