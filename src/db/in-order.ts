import { isDatabaseUnavailable, type Queryable } from "./client.js";

/**
 * Statements of one transaction sent together instead of one after another. Each step is a
 * function that sends its statement (or statements); they are called in the order given, without
 * awaiting each other, when `db` is a transaction (`oneConnection`), and one after another when it
 * is not. On PostgreSQL the driver then pipelines them on the transaction's connection: one write
 * and one wake-up of the server instead of a round trip each. PGlite runs them in the order they
 * were sent. PostgreSQL still runs them one after another, in that order, so each sees what the
 * ones before it wrote and runs under the locks they took.
 *
 * The order PostgreSQL sees is the order in which the steps call `query`. A step whose statement
 * must follow an earlier step's has to send it before its first `await` of anything else (build
 * its parameters before calling inOrder); steps whose order does not matter may await first.
 *
 * Only for steps that need no result of an earlier one in the service (a result that decides
 * whether, or with what, a later statement is sent). Errors come out as if the steps had been
 * awaited one after another: the first failure in the given order is thrown, whatever failed first
 * in time (after a failed statement the later ones fail too, "current transaction is aborted", and
 * the transaction is rolled back either way). A statement that would not have been sent after an
 * earlier step failed is now run and rolled back with the rest: the outcome is the same.
 */
export async function inOrder<T extends readonly unknown[]>(db: Queryable, steps: { readonly [K in keyof T]: () => Promise<T[K]> }): Promise<T> {
  if (!db.oneConnection) {
    const out: unknown[] = [];
    for (const step of steps) out.push(await step());
    return out as unknown as T;
  }
  const started = steps.map((step) => {
    try {
      return step();
    } catch (err) {
      return Promise.reject(err);
    }
  });
  const settled = await settleAll(started);
  for (const s of settled) if (s.status === "rejected") throw s.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * Waits until every step has settled, so that no statement of a step is sent after the
 * transaction ends (a step may still be building its statement when an earlier one fails). Except
 * when the connection is lost: statements the driver queued behind the lost one are never answered,
 * and nothing more can be sent on that connection, so the first such failure is thrown at once.
 */
function settleAll(started: Promise<unknown>[]): Promise<PromiseSettledResult<unknown>[]> {
  return new Promise((resolve, reject) => {
    for (const p of started) p.catch((err: unknown) => isDatabaseUnavailable(err) && reject(err));
    void Promise.allSettled(started).then(resolve);
  });
}
