import DataLoader from "dataloader";
import type { Queryable } from "./client.js";

/**
 * Coalesces concurrent point reads into one statement: `load` gets every key asked for since the
 * last turn of the event loop (requests parsed together, e.g. under load) and returns one value per
 * key, in order. Each caller sees what one query saw at a moment during its request, as with a
 * query of its own; no value is kept after it is answered (DataLoader with its cache off, nothing
 * stale). The batch is scheduled with setImmediate rather than DataLoader's default (the end of
 * the current microtask queue), so that requests parsed in the same turn of the loop share it.
 */
export class ReadBatcher<K, V> {
  private readonly loader: DataLoader<K, V>;

  constructor(load: (keys: K[]) => Promise<V[]>) {
    this.loader = new DataLoader<K, V>((keys) => load([...keys]), {
      cache: false,
      batchScheduleFn: (run) => setImmediate(run),
    });
  }

  get(key: K): Promise<V> {
    return this.loader.load(key);
  }
}

/** One batcher per database handle and purpose. */
export function batcherFor<K, V>(
  cache: WeakMap<Queryable, ReadBatcher<K, V>>,
  db: Queryable,
  load: (db: Queryable, keys: K[]) => Promise<V[]>,
): ReadBatcher<K, V> {
  let b = cache.get(db);
  if (!b) {
    b = new ReadBatcher((keys) => load(db, keys));
    cache.set(db, b);
  }
  return b;
}
