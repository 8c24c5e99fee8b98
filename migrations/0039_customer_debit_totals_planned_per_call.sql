-- The statement that keeps customer_debit_totals, planned at each call (EXECUTE) with the sizes the
-- tables and the statement's transition tables have then. PL/pgSQL keeps one plan per session for a
-- statement without parameters, made at its first call: a plan made for a one-row change while
-- accounts was small (nested loops over the transition tables and a scan of accounts) was kept for
-- changes of thousands of rows, and a batch's balance update ran for tens of seconds holding the
-- fee accounts' locks. It no longer joins the transition tables either: each account's change is
-- its new debits less its old ones, summed (a row moved to another account counts out of one and
-- into the other; a row whose debits did not change adds nothing and locks no total).
CREATE OR REPLACE FUNCTION customer_debit_totals_follow() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes text := CASE TG_OP
    WHEN 'UPDATE' THEN 'SELECT account_id, debits_posted AS delta FROM new_rows WHERE debits_posted <> 0
                        UNION ALL SELECT account_id, -debits_posted FROM old_rows WHERE debits_posted <> 0'
    WHEN 'INSERT' THEN 'SELECT account_id, debits_posted AS delta FROM new_rows WHERE debits_posted <> 0'
    ELSE 'SELECT account_id, -debits_posted AS delta FROM old_rows WHERE debits_posted <> 0' END;
BEGIN
  EXECUTE format($q$
    INSERT INTO customer_debit_totals AS t (marketplace_id, asset_id, debits_posted)
    SELECT a.marketplace_id, a.asset_id, sum(d.delta)
      FROM (SELECT c.account_id, sum(c.delta) AS delta FROM (%s) c GROUP BY c.account_id HAVING sum(c.delta) <> 0) d
      JOIN accounts a ON a.id = d.account_id
     WHERE a.opened_by_service AND a.marketplace_id IS NOT NULL AND a.code IN ('customer_prepaid', 'customer_postpaid')
     GROUP BY a.marketplace_id, a.asset_id
    HAVING sum(d.delta) <> 0
     ORDER BY a.marketplace_id, a.asset_id
    ON CONFLICT (marketplace_id, asset_id) DO UPDATE SET debits_posted = t.debits_posted + excluded.debits_posted$q$, changes);
  RETURN NULL;
END $$;
