/**
 * The two yardsticks of the benchmark, run straight on the database (no HTTP, no service):
 *
 * - naive: what a simple ledger does, one database transaction per usage record, inserting the
 *   transfer and its entries and UPDATEing each balance row (the marketplace's fee account is
 *   the same row for every record);
 * - raw: the rows of a usage record (a transfer, four entries, a usage record) inserted with plain
 *   INSERT … SELECT unnest(…) in batches of 1,000, into copies of the service's tables with their
 *   indexes, and no ledger logic at all: the ceiling;
 * - raw with the service's rows (`rows: "service"`): the rows the service writes for a usage
 *   record instead: six entries (three legs, the customer debited on each), and the balance rows
 *   of the accounts a batch touches locked in id order and updated once each, as the service's
 *   writer does; still no ledger logic (no running balances, limits, idempotency or seal).
 */
import { randomUUID } from "node:crypto";
import type postgres from "postgres";
import { timed } from "./load.js";

const OPERATORS = 1000;
const CUSTOMERS = 1000;

export async function naive(sql: postgres.Sql, seconds: number, concurrency = 4) {
  await sql.unsafe(`
    drop schema if exists bench_naive cascade;
    create schema bench_naive;
    create table bench_naive.accounts (id int primary key, balance numeric(78,0) not null default 0);
    create table bench_naive.transfers (id bigserial primary key, external_id text not null unique, amount numeric(78,0) not null, created_at timestamptz not null default now());
    create table bench_naive.entries (id bigserial primary key, transfer_id bigint not null, account_id int not null, amount numeric(78,0) not null);
    create index on bench_naive.entries (account_id, id);
    insert into bench_naive.accounts (id) select g from generate_series(1, ${OPERATORS + CUSTOMERS + 2}) g;`);
  let n = 0;
  const run = await timed(concurrency, seconds * 1000, async () => {
    const customer = 1 + Math.floor(Math.random() * CUSTOMERS);
    const operator = CUSTOMERS + 1 + Math.floor(Math.random() * OPERATORS);
    const fee = CUSTOMERS + OPERATORS + 1;
    const protocol = fee + 1;
    await sql.begin(async (tx) => {
      const [t] = await tx`insert into bench_naive.transfers (external_id, amount) values (${`n-${process.pid}-${++n}`}, 2500000) returning id`;
      await tx`insert into bench_naive.entries (transfer_id, account_id, amount) values (${t!.id}, ${customer}, -2500000), (${t!.id}, ${operator}, 2225000), (${t!.id}, ${fee}, 250000), (${t!.id}, ${protocol}, 25000)`;
      await tx`update bench_naive.accounts set balance = balance - 2500000 where id = ${customer}`;
      await tx`update bench_naive.accounts set balance = balance + 2225000 where id = ${operator}`;
      await tx`update bench_naive.accounts set balance = balance + 250000 where id = ${fee}`;
      await tx`update bench_naive.accounts set balance = balance + 25000 where id = ${protocol}`;
    });
    return 1;
  });
  await sql.unsafe("drop schema bench_naive cascade");
  return { recordsPerSecond: run.units / run.seconds, records: run.units };
}

export async function raw(sql: postgres.Sql, seconds: number, concurrency = 4, batch = 1000, rows: "raw" | "service" = "raw") {
  await sql.unsafe(`
    drop schema if exists bench_raw cascade;
    create schema bench_raw;
    create table bench_raw.transfers (like public.transfers including defaults including identity including indexes including constraints);
    create table bench_raw.entries (like public.entries including defaults including identity including indexes including constraints);
    create table bench_raw.usage_records (like public.usage_records including defaults including indexes including constraints);
    create table bench_raw.account_balances (like public.account_balances including defaults including indexes including constraints);`);
  const accounts = Array.from({ length: OPERATORS + CUSTOMERS + 2 }, () => randomUUID());
  if (rows === "service") await sql`insert into bench_raw.account_balances (account_id) select unnest(${accounts}::uuid[])`;
  const asset = randomUUID();
  let k = 0;
  const run = await timed(concurrency, seconds * 1000, async () => {
    const ids: string[] = [],
      keys: string[] = [],
      hashes: string[] = [],
      meta: string[] = [];
    const eT: string[] = [],
      eLeg: number[] = [],
      eAcct: string[] = [],
      eSide: string[] = [],
      eAmt: string[] = [];
    const uExt: string[] = [],
      uOp: string[] = [],
      uCust: string[] = [];
    const moves = new Map<string, { debits: bigint; credits: bigint }>();
    for (let i = 0; i < batch; i++) {
      const id = randomUUID();
      const ext = `r-${process.pid}-${++k}`;
      ids.push(id);
      keys.push(`usage:m:${ext}`);
      hashes.push("0".repeat(64));
      meta.push(JSON.stringify({ usage: { external_id: ext } }));
      const c = Math.floor(Math.random() * CUSTOMERS),
        o = CUSTOMERS + Math.floor(Math.random() * OPERATORS);
      const parties: [string, string, string, string] = [accounts[c]!, accounts[o]!, accounts[CUSTOMERS + OPERATORS]!, accounts[CUSTOMERS + OPERATORS + 1]!];
      if (rows === "service") pushLegs({ eT, eLeg, eAcct, eSide, eAmt }, id, parties, moves);
      else pushEntries({ eT, eLeg, eAcct, eSide, eAmt }, id, parties);
      uExt.push(ext);
      uOp.push(`op-${o}`);
      uCust.push(`c-${c}`);
    }
    await sql.begin(async (tx) => {
      await tx`insert into bench_raw.transfers (id, idempotency_key, request_hash, kind, effective_at, metadata)
               select id, k, h, 'standard', now(), m::jsonb from unnest(${ids}::uuid[], ${keys}::text[], ${hashes}::text[], ${meta}::text[]) as u(id, k, h, m)`;
      await tx`insert into bench_raw.entries (transfer_id, leg, account_id, asset_id, side, posted_amount, pending_amount, balance_after, effective_at)
               select t, l, a, ${asset}, s, amt, 0, amt, now() from unnest(${eT}::uuid[], ${eLeg}::int[], ${eAcct}::uuid[], ${eSide}::text[], ${eAmt}::numeric[]) as u(t, l, a, s, amt)`;
      await tx`insert into bench_raw.usage_records (id, marketplace_id, external_id, request_hash, operator_id, customer_id, resource, unit, quantity, unit_price, asset_id,
                                                    gross, net, fees, fee_schedule_version, period_start, period_end, effective_at, transfer_id)
               select gen_random_uuid(), 'bench', e, '0', o, c, 'gpu:h100', 'gpu_hour', 1, 2.5, ${asset}, 2500000, 2225000, '[]', 1, now(), now(), now(), t
                 from unnest(${uExt}::text[], ${uOp}::text[], ${uCust}::text[], ${ids}::uuid[]) as u(e, o, c, t)`;
      if (rows === "service") {
        const touched = [...moves.keys()].sort();
        await tx`select 1 from bench_raw.account_balances where account_id = any(${touched}::uuid[]) order by account_id for update`;
        await tx`update bench_raw.account_balances b set debits_posted = b.debits_posted + d.dp, credits_posted = b.credits_posted + d.cp
                   from unnest(${touched}::uuid[], ${touched.map((a) => moves.get(a)!.debits.toString())}::numeric[],
                               ${touched.map((a) => moves.get(a)!.credits.toString())}::numeric[]) as d(id, dp, cp)
                  where b.account_id = d.id`;
      }
    });
    return batch;
  });
  await sql.unsafe("drop schema bench_raw cascade");
  return { recordsPerSecond: run.units / run.seconds, records: run.units };
}

/**
 * The four entries of one raw usage record (2.5 of gross: the customer debited, the operator, the
 * marketplace's fees and the protocol's credited), appended to the entry columns.
 */
export function pushEntries(
  cols: { eT: string[]; eLeg: number[]; eAcct: string[]; eSide: string[]; eAmt: string[] },
  transferId: string,
  [customer, operator, fees, protocol]: [string, string, string, string],
): void {
  const legs: Array<[string, string, string]> = [
    [customer, "debit", "2500000"],
    [operator, "credit", "2225000"],
    [fees, "credit", "250000"],
    [protocol, "credit", "25000"],
  ];
  legs.forEach(([account, side, amount], leg) => {
    cols.eT.push(transferId);
    cols.eLeg.push(leg);
    cols.eAcct.push(account);
    cols.eSide.push(side);
    cols.eAmt.push(amount);
  });
}

/**
 * The six entries of one usage record as the service writes it (three legs: the customer debited
 * and the operator, the marketplace's fees and the protocol's credited), appended to the entry
 * columns, with what each account moves added to `moves`.
 */
export function pushLegs(
  cols: { eT: string[]; eLeg: number[]; eAcct: string[]; eSide: string[]; eAmt: string[] },
  transferId: string,
  [customer, operator, fees, protocol]: [string, string, string, string],
  moves: Map<string, { debits: bigint; credits: bigint }>,
): void {
  const move = (account: string, side: "debits" | "credits", amount: bigint) => {
    const m = moves.get(account) ?? { debits: 0n, credits: 0n };
    m[side] += amount;
    moves.set(account, m);
  };
  const legs: [string, bigint][] = [
    [operator, 2225000n],
    [fees, 250000n],
    [protocol, 25000n],
  ];
  legs.forEach(([credited, amount], leg) => {
    for (const [account, side] of [
      [customer, "debit"],
      [credited, "credit"],
    ] as const) {
      cols.eT.push(transferId);
      cols.eLeg.push(leg);
      cols.eAcct.push(account);
      cols.eSide.push(side);
      cols.eAmt.push(amount.toString());
    }
    move(customer, "debits", amount);
    move(credited, "credits", amount);
  });
}
