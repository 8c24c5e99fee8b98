import type { TestDatabase } from "./db.js";

/**
 * A database handle whose top-level queries can run one hook right after a matching query has
 * answered: it makes the interleaving of two concurrent requests deterministic (the hook plays the
 * second request between the first request's check and its write). Transactions are not hooked
 * (their queries run on the transaction's own handle).
 */
export function hookable(db: TestDatabase) {
  let hook: { match: RegExp; run: () => Promise<void> } | null = null;
  let fired = false;
  const proxy = new Proxy(db, {
    get(target, prop) {
      if (prop === "query") {
        return async (text: string, params?: unknown[]) => {
          const rows = await target.query(text, params);
          const h = hook;
          if (h && h.match.test(text)) {
            hook = null;
            fired = true;
            await h.run();
          }
          return rows;
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  }) as TestDatabase;
  return {
    db: proxy,
    arm(match: RegExp, run: () => Promise<void>) {
      hook = { match, run };
      fired = false;
    },
    fired: () => fired,
    disarm() {
      hook = null;
    },
  };
}
