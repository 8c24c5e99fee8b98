import postgres from "postgres";
import { afterEach, describe, expect, it } from "vitest";
import { NEEDS_PG, onRealPostgres, realPostgresUrl } from "../support/db.js";

/**
 * The PostgreSQL driver (postgres.js) counts the rows of the answer it is reading on the
 * connection. Unpatched, a query that fails after some of its rows have arrived — an error in the
 * middle of the rows, or the server ending the connection (a crash or a restart) — leaves that
 * count behind, and the next query on the connection answers a sparse array: holes, or the failed
 * query's rows, before its own (porsager/postgres#1181, #1119). The service met it as a 500 right
 * after PostgreSQL restarted (an API key looked up in an array with holes).
 * patches/postgres+3.4.9.patch resets the count.
 */
const open: postgres.Sql[] = [];
const connect = () => {
  const sql = postgres(realPostgresUrl!, { max: 1, onnotice: () => {} });
  open.push(sql);
  return sql;
};
afterEach(async () => {
  await Promise.all(open.splice(0).map((sql) => sql.end({ timeout: 5 })));
});

const expectOneToFive = (rows: postgres.RowList<postgres.Row[]>) => {
  expect(Object.keys(rows)).toEqual(["0", "1", "2", "3", "4"]); // no holes
  expect(rows.map((r) => r.x)).toEqual([1, 2, 3, 4, 5]);
};

describe.skipIf(!onRealPostgres)(`the driver's answer after a query that failed in the middle of its rows ${NEEDS_PG}`, () => {
  it("a query that errs after three rows (division by zero), then another: the other answers its own rows only", async () => {
    const sql = connect();
    const failed = await sql`select i, 1 / (4 - i) as boom from generate_series(1, 10) i`.catch((e: Error) => e);
    expect(failed).toBeInstanceOf(Error);
    expectOneToFive(await sql`select x from generate_series(1, 5) x`);
  });

  it("the same when the next query was sent before the first failed (pipelined on the connection)", async () => {
    const sql = connect();
    const failing = sql`select i, 1 / (4 - i) as boom from generate_series(1, 10) i`.catch((e: Error) => e);
    const next = sql`select x from generate_series(1, 5) x`;
    expect(await failing).toBeInstanceOf(Error);
    expectOneToFive(await next);
  });

  it("a connection ended by the server after three rows (its backend terminated, as in a crash): the next queries answer their own rows only", async () => {
    const sql = connect();
    const admin = connect();
    const [{ pid }] = (await sql`select pg_backend_pid() as pid`) as unknown as [{ pid: number }];
    const failing = sql`select i, case when i = 4 then pg_sleep(30) end as s from generate_series(1, 10) i`.catch((e: Error) => e);
    // Terminated once it sleeps on the fourth row: the three before it are sent with the error.
    for (let i = 0; i < 100; i++) {
      const [row] = await admin`select count(*)::int as n from pg_stat_activity where pid = ${pid} and wait_event = 'PgSleep'`;
      if (row!.n === 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await admin`select pg_terminate_backend(${pid})`;
    expect(await failing).toBeInstanceOf(Error);
    // The first query on the new connection may still fail with the error that ended the old one
    // (57P01: the service answers it 503, to be retried); what it must never do is answer rows
    // that are not its own.
    const next = await sql`select x from generate_series(1, 5) x`.catch((e: Error) => e);
    if (next instanceof Error) expect(next).toMatchObject({ code: "57P01" });
    else expectOneToFive(next);
    expectOneToFive(await sql`select x from generate_series(1, 5) x`);
  });
});
