import { paidBeyondFunds } from "./funding.js";
import type { Database } from "../db/client.js";
import { sha256Hex } from "../domain/canonical.js";
import { digestRange, type SealFormat } from "../db/journal-seals.js";

export interface Violation {
  /** Which invariant: balanced_assets, balanced_legs, balances_match_entries, running_balance, limits, references, transfers_have_entries, hash_chain */
  check: string;
  detail: string;
}

export interface VerifyReport {
  ok: boolean;
  violations: Violation[];
  counts: { assets: number; accounts: number; transfers: number; entries: number; seals: number };
}

const MAX_PER_CHECK = 20;

/** Checks a whole database against the ledger's invariants (docs/ledger.md). Read-only. */
export async function verifyLedger(db: Database): Promise<VerifyReport> {
  const violations: Violation[] = [];
  const add = (check: string, rows: Record<string, unknown>[], describe: (r: Record<string, unknown>) => string) => {
    for (const r of rows.slice(0, MAX_PER_CHECK)) violations.push({ check, detail: describe(r) });
  };

  add("balanced_assets", await db.query(`
    select s.code, sum(b.debits_posted - b.credits_posted)::text as posted_diff, sum(b.debits_pending - b.credits_pending)::text as pending_diff
      from account_balances b join accounts a on a.id = b.account_id join assets s on s.id = a.asset_id
     group by s.code
    having sum(b.debits_posted) <> sum(b.credits_posted) or sum(b.debits_pending) <> sum(b.credits_pending)`),
    (r) => `asset ${r.code}: total debits minus credits is ${r.posted_diff} posted and ${r.pending_diff} pending (must be 0)`);

  add("balanced_legs", await db.query(`
    select transfer_id, leg from entries group by transfer_id, leg
    having count(*) <> 2 or count(*) filter (where side = 'debit') <> 1
        or min(posted_amount) <> max(posted_amount) or min(pending_amount) <> max(pending_amount)
        or min(asset_id::text) <> max(asset_id::text)`),
    (r) => `transfer ${r.transfer_id} leg ${r.leg} is not one debit and one credit of the same amount and asset`);

  add("balances_match_entries", await db.query(`
    select b.account_id from account_balances b
      left join (select account_id,
                        coalesce(sum(posted_amount) filter (where side = 'debit'), 0) as dp,
                        coalesce(sum(posted_amount) filter (where side = 'credit'), 0) as cp,
                        coalesce(sum(pending_amount) filter (where side = 'debit'), 0) as dpe,
                        coalesce(sum(pending_amount) filter (where side = 'credit'), 0) as cpe
                   from entries group by account_id) e on e.account_id = b.account_id
     where (b.debits_posted, b.credits_posted, b.debits_pending, b.credits_pending)
           is distinct from (coalesce(e.dp, 0), coalesce(e.cp, 0), coalesce(e.dpe, 0), coalesce(e.cpe, 0))`),
    (r) => `account ${r.account_id}: stored balances differ from the sum of its entries`);

  add("running_balance", await db.query(`
    select l.account_id from (select distinct on (account_id) account_id, balance_after from entries order by account_id, id desc) l
      join accounts a on a.id = l.account_id join account_balances b on b.account_id = l.account_id
     where l.balance_after <> case a.normal_side when 'credit' then b.credits_posted - b.debits_posted
                                                 else b.debits_posted - b.credits_posted end`),
    (r) => `account ${r.account_id}: the running balance of its last entry differs from its posted balance`);

  add("limits", await db.query(`
    select a.id, case when a.debits_must_not_exceed_credits then 'debits exceed credits' else 'credits exceed debits' end as what
      from accounts a join account_balances b on b.account_id = a.id
     where (a.debits_must_not_exceed_credits and b.debits_posted + b.debits_pending > b.credits_posted + b.overdraft_limit)
        or (a.credits_must_not_exceed_debits and b.credits_posted + b.credits_pending > b.debits_posted)`),
    (r) => `account ${r.id}: ${r.what}, which its flags forbid`);

  add("references", await db.query(`
    select 'entry ' || e.id || ' names a missing ' ||
           case when t.id is null then 'transfer' when a.id is null then 'account' else 'asset' end as what
      from entries e left join transfers t on t.id = e.transfer_id left join accounts a on a.id = e.account_id
      left join assets s on s.id = e.asset_id
     where t.id is null or a.id is null or s.id is null or a.asset_id <> e.asset_id
    union all
    select 'usage record ' || u.id || ' names a missing transfer' from usage_records u
     where not exists (select 1 from transfers t where t.id = u.transfer_id)`),
    (r) => String(r.what));

  add("transfers_have_entries", await db.query(`
    select t.id from transfers t where not exists (select 1 from entries e where e.transfer_id = t.id)`),
    (r) => `transfer ${r.id} has no entries`);

  // Only money that came in goes out: what an operator was paid (or is being paid) never takes
  // earnings whose money has not been received, so its available balance always holds them.
  const unfunded = (await paidBeyondFunds(db)).map((p) => ({ owner_id: p.operatorId, asset_id: p.assetId, available: p.available.toString(), awaiting: p.awaiting.toString() }));
  add("funded_payouts", unfunded,
    (r) => `operator ${r.owner_id} (asset ${r.asset_id}) was paid out of earnings whose money has not been received: available ${r.available} is less than its ${r.awaiting} awaiting funds`);

  violations.push(...(await verifyHashChain(db)));

  const [counts] = await db.query<{ assets: string; accounts: string; transfers: string; entries: string; seals: string }>(`
    select (select count(*) from assets)::text as assets, (select count(*) from accounts)::text as accounts,
           (select count(*) from transfers)::text as transfers, (select count(*) from entries)::text as entries,
           (select count(*) from journal_seals)::text as seals`);
  return {
    ok: violations.length === 0,
    violations,
    counts: {
      assets: Number(counts!.assets), accounts: Number(counts!.accounts), transfers: Number(counts!.transfers),
      entries: Number(counts!.entries), seals: Number(counts!.seals),
    },
  };
}

/** Recomputes every seal from the rows it covers; reports the first link that does not hold. */
export async function verifyHashChain(db: Database): Promise<Violation[]> {
  const seals = await db.query<{ id: string; from_txid: string; to_txid: string; transfer_count: number; prev_hash: string; hash: string; format: number }>(
    "select id::text as id, from_txid::text as from_txid, to_txid::text as to_txid, transfer_count, prev_hash, hash, format from journal_seals order by journal_seals.id",
  );
  let prev = "0".repeat(64);
  let prevTo = "0";
  for (const s of seals) {
    const fail = (why: string): Violation[] => [{ check: "hash_chain", detail: `seal ${s.id} (txids ${s.from_txid}..${s.to_txid}): ${why}` }];
    if (s.prev_hash !== prev || s.from_txid !== prevTo) return fail("does not continue the previous seal (a seal was changed or removed)");
    if (s.format !== 1 && s.format !== 2) return fail(`has an unknown digest format ${s.format}`);
    const { count, digest } = await digestRange(db, BigInt(s.from_txid), BigInt(s.to_txid), s.format as SealFormat);
    if (count !== s.transfer_count) return fail(`covers ${count} transfers now but sealed ${s.transfer_count} (rows were added or removed)`);
    if (sha256Hex(prev + digest) !== s.hash) return fail("its transfers or entries were changed after sealing");
    prev = s.hash;
    prevTo = s.to_txid;
  }
  return [];
}
