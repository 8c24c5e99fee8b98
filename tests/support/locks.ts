import type { Database, Queryable } from "../../src/db/client.js";

/**
 * Holds a lock from another connection of `db` (the statement that takes it runs in a transaction
 * of its own) until `release` is called: for tests that stage a write or a change waiting for it.
 */
export function holdLock(db: Database, statement: string): { isHeld: Promise<void>; release: () => Promise<void> } {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let held!: () => void;
  const isHeld = new Promise<void>((r) => (held = r));
  const holder = db.transaction(async (tx: Queryable) => {
    await tx.query(statement);
    held();
    await released;
  });
  return {
    isHeld,
    release: async () => {
      release();
      await holder;
    },
  };
}
