CREATE TABLE "customer_debit_totals" (
	"marketplace_id" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"debits_posted" numeric NOT NULL,
	CONSTRAINT "customer_debit_totals_marketplace_id_asset_id_pk" PRIMARY KEY("marketplace_id","asset_id")
);
--> statement-breakpoint
ALTER TABLE "chain_deposits" ADD CONSTRAINT "chain_deposits_amount" CHECK ("chain_deposits"."amount" >= 0);
--> statement-breakpoint
-- Kept in the statement that changes a balance, whoever writes (the ledger writer, a repair, an
-- older process during an upgrade): the change of debits_posted of each customer account the
-- service opened, summed per marketplace and asset, in key order (two writers lock the rows of
-- several marketplaces in the same order).
CREATE FUNCTION customer_debit_totals_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    -- The new rows' debits less the old rows' per account: a row whose debits did not change adds
    -- nothing and locks no total; a row moved to another account counts out of one and into the other.
    INSERT INTO customer_debit_totals AS t (marketplace_id, asset_id, debits_posted)
    SELECT a.marketplace_id, a.asset_id, sum(d.delta)
      FROM (SELECT n.account_id, n.debits_posted - coalesce(o.debits_posted, 0) AS delta
              FROM new_rows n LEFT JOIN old_rows o ON o.account_id = n.account_id
             WHERE n.debits_posted IS DISTINCT FROM o.debits_posted
            UNION ALL
            SELECT o.account_id, -o.debits_posted
              FROM old_rows o
             WHERE o.debits_posted <> 0 AND NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.account_id = o.account_id)) d
      JOIN accounts a ON a.id = d.account_id
     WHERE a.opened_by_service AND a.marketplace_id IS NOT NULL AND a.code IN ('customer_prepaid', 'customer_postpaid')
     GROUP BY a.marketplace_id, a.asset_id
    HAVING sum(d.delta) <> 0
     ORDER BY a.marketplace_id, a.asset_id
    ON CONFLICT (marketplace_id, asset_id) DO UPDATE SET debits_posted = t.debits_posted + excluded.debits_posted;
  ELSIF TG_OP = 'INSERT' THEN
    INSERT INTO customer_debit_totals AS t (marketplace_id, asset_id, debits_posted)
    SELECT a.marketplace_id, a.asset_id, sum(n.debits_posted)
      FROM new_rows n JOIN accounts a ON a.id = n.account_id
     WHERE n.debits_posted <> 0
       AND a.opened_by_service AND a.marketplace_id IS NOT NULL AND a.code IN ('customer_prepaid', 'customer_postpaid')
     GROUP BY a.marketplace_id, a.asset_id
     ORDER BY a.marketplace_id, a.asset_id
    ON CONFLICT (marketplace_id, asset_id) DO UPDATE SET debits_posted = t.debits_posted + excluded.debits_posted;
  ELSE
    INSERT INTO customer_debit_totals AS t (marketplace_id, asset_id, debits_posted)
    SELECT a.marketplace_id, a.asset_id, -sum(o.debits_posted)
      FROM old_rows o JOIN accounts a ON a.id = o.account_id
     WHERE o.debits_posted <> 0
       AND a.opened_by_service AND a.marketplace_id IS NOT NULL AND a.code IN ('customer_prepaid', 'customer_postpaid')
     GROUP BY a.marketplace_id, a.asset_id
     ORDER BY a.marketplace_id, a.asset_id
    ON CONFLICT (marketplace_id, asset_id) DO UPDATE SET debits_posted = t.debits_posted + excluded.debits_posted;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER account_balances_customer_debits_update AFTER UPDATE ON account_balances
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION customer_debit_totals_follow();
--> statement-breakpoint
CREATE TRIGGER account_balances_customer_debits_insert AFTER INSERT ON account_balances
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION customer_debit_totals_follow();
--> statement-breakpoint
CREATE TRIGGER account_balances_customer_debits_delete AFTER DELETE ON account_balances
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION customer_debit_totals_follow();
--> statement-breakpoint
-- What the balances hold now. Creating the triggers took a lock that keeps every writer of
-- account_balances waiting until this migration commits, so nothing is missed or counted twice.
INSERT INTO customer_debit_totals (marketplace_id, asset_id, debits_posted)
SELECT a.marketplace_id, a.asset_id, sum(b.debits_posted)
  FROM accounts a JOIN account_balances b ON b.account_id = a.id
 WHERE a.opened_by_service AND a.marketplace_id IS NOT NULL AND a.code IN ('customer_prepaid', 'customer_postpaid')
 GROUP BY a.marketplace_id, a.asset_id
HAVING sum(b.debits_posted) <> 0;
--> statement-breakpoint
-- Written only by the trigger above (a trigger's statement runs at depth 2 here): a total changed by
-- hand would make the funding judgment's bound wrong (`npm run verify` names it either way).
CREATE FUNCTION customer_debit_totals_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' OR pg_trigger_depth() < 2 THEN
    RAISE EXCEPTION 'customer_debit_totals is kept by the trigger on account_balances: % is not allowed', TG_OP
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER customer_debit_totals_kept BEFORE INSERT OR UPDATE OR DELETE ON customer_debit_totals
  FOR EACH STATEMENT EXECUTE FUNCTION customer_debit_totals_guard();
--> statement-breakpoint
CREATE TRIGGER customer_debit_totals_no_truncate BEFORE TRUNCATE ON customer_debit_totals
  FOR EACH STATEMENT EXECUTE FUNCTION customer_debit_totals_guard();
