import type { Queryable } from "./client.js";

/**
 * The balance each monitor watches, on its account's normal side: posted, or available (posted
 * less outgoing holds, as src/domain/accounts.ts computes it), and the state it moves to. Crossing
 * needs the balance strictly past the threshold (below: < threshold; above: > threshold); coming
 * back needs it past the threshold by the hysteresis (below: >= threshold + hysteresis; above:
 * <= threshold - hysteresis), so a balance hovering at the line fires once.
 */
const NEXT_STATES = `
  with cur as (
    select m.id, m.marketplace_id, m.operator_id, m.account_id, a.asset_id, m.direction, m.balance, m.threshold, m.hysteresis, m.state,
           case when a.normal_side = 'credit'
                then coalesce(b.credits_posted, 0) - coalesce(b.debits_posted, 0) - case when m.balance = 'available' then coalesce(b.debits_pending, 0) else 0 end
                else coalesce(b.debits_posted, 0) - coalesce(b.credits_posted, 0) - case when m.balance = 'available' then coalesce(b.credits_pending, 0) else 0 end
           end as value
      from balance_monitors m
      join accounts a on a.id = m.account_id
      left join account_balances b on b.account_id = m.account_id),
  next as (
    select c.*,
           case when c.state = 'ok' and c.direction = 'below' and c.value < c.threshold then 'crossed'
                when c.state = 'ok' and c.direction = 'above' and c.value > c.threshold then 'crossed'
                when c.state = 'crossed' and c.direction = 'below' and c.value >= c.threshold + c.hysteresis then 'ok'
                when c.state = 'crossed' and c.direction = 'above' and c.value <= c.threshold - c.hysteresis then 'ok'
                else c.state end as new_state
      from cur c),
  moved as (select * from next where new_state <> state)`;

/**
 * Evaluates every balance monitor once against the balances as they stand, set-based (one
 * statement, whatever the number of transfers in the step), and appends one event per monitor whose
 * state changed: balance.threshold.crossed or balance.threshold.recovered, positions after `last`.
 * Runs in the relay's transaction, after the step's derived events. Returns how many it appended.
 */
export async function evaluateBalanceMonitors(tx: Queryable, last: bigint, now: Date): Promise<bigint> {
  const [row] = await tx.query<{ n: string }>(
    `${NEXT_STATES},
     updated as (
       update balance_monitors m set state = mv.new_state, last_balance = mv.value, changed_at = $2::timestamptz
         from moved mv where m.id = mv.id
       returning m.id),
     appended as (
       insert into events (position, id, type, marketplace_id, operator_id, resource_type, resource_id, data, occurred_at)
       select $1::bigint + row_number() over (order by mv.id),
              'evt_' || gen_random_uuid(),
              case mv.new_state when 'crossed' then 'balance.threshold.crossed' else 'balance.threshold.recovered' end,
              mv.marketplace_id, mv.operator_id, 'balance_monitor', mv.id::text,
              jsonb_build_object('monitor_id', mv.id, 'account_id', mv.account_id, 'asset_id', mv.asset_id, 'direction', mv.direction,
                                 'balance', mv.balance, 'threshold', mv.threshold::text, 'hysteresis', mv.hysteresis::text,
                                 'value', mv.value::text, 'state', mv.new_state),
              $2::timestamptz
         from moved mv
       returning 1)
     select (select count(*) from appended)::text as n, (select count(*) from updated) as u`,
    [last.toString(), now.toISOString()],
  );
  return BigInt(row?.n ?? "0");
}
