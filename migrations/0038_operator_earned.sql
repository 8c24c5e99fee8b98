CREATE TABLE "operator_earned" (
	"marketplace_id" text NOT NULL,
	"operator_id" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"amount" numeric NOT NULL,
	"folded" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE INDEX "operator_earned_operator_idx" ON "operator_earned" USING btree ("operator_id","asset_id");--> statement-breakpoint
CREATE INDEX "operator_earned_unfolded_idx" ON "operator_earned" USING btree ("marketplace_id","operator_id","asset_id") WHERE not "operator_earned"."folded";--> statement-breakpoint
CREATE INDEX "usage_records_transfer_idx" ON "usage_records" USING btree ("transfer_id");
--> statement-breakpoint
-- Kept in the statement that writes usage records, whoever writes (the ingest writer, a repair, an
-- older process during an upgrade): one part per marketplace, operator and asset of the statement.
-- Parts are inserted, never updated, so concurrent batches of the same operator take no lock here.
CREATE FUNCTION operator_earned_follow_usage() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO operator_earned (marketplace_id, operator_id, asset_id, amount)
  SELECT marketplace_id, operator_id, asset_id, sum(net)
    FROM new_rows
   GROUP BY marketplace_id, operator_id, asset_id
  HAVING sum(net) <> 0;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER usage_records_operator_earned AFTER INSERT ON usage_records
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION operator_earned_follow_usage();
--> statement-breakpoint
-- A reversal of a usage record's transfer takes its net back (a transfer is reversed at most once:
-- transfers_reverses_uq). A row trigger with a condition: the usage transfers that make up nearly
-- every insert are passed over without calling anything. Planned at each call (EXECUTE), so that a
-- plan the session kept from when usage_records was small never scans it.
CREATE FUNCTION operator_earned_follow_reversal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'INSERT INTO operator_earned (marketplace_id, operator_id, asset_id, amount)
           SELECT u.marketplace_id, u.operator_id, u.asset_id, -u.net
             FROM usage_records u
            WHERE u.transfer_id = $1 AND u.net <> 0' USING NEW.reverses_id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER transfers_operator_earned AFTER INSERT ON transfers
  FOR EACH ROW WHEN (NEW.reverses_id IS NOT NULL) EXECUTE FUNCTION operator_earned_follow_reversal();
--> statement-breakpoint
-- What the records hold now. Creating the triggers took locks that keep every writer of
-- usage_records and transfers waiting until this migration commits: nothing is missed or counted twice.
INSERT INTO operator_earned (marketplace_id, operator_id, asset_id, amount, folded)
SELECT u.marketplace_id, u.operator_id, u.asset_id, sum(u.net), true
  FROM usage_records u
 WHERE NOT EXISTS (SELECT 1 FROM transfers r WHERE r.reverses_id = u.transfer_id)
 GROUP BY u.marketplace_id, u.operator_id, u.asset_id
HAVING sum(u.net) <> 0;
--> statement-breakpoint
-- Written only by the triggers above (their statements run at depth 2 here) and by the fold below:
-- a part changed by hand would make an operator's earnings wrong. The guard stops mistakes, not a
-- session that sets ledger.folding_operator_earned as the fold does or turns triggers off (a role
-- that can do that can write any table): `npm run verify` names a wrong part either way.
CREATE FUNCTION operator_earned_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' OR (pg_trigger_depth() < 2 AND current_setting('ledger.folding_operator_earned', true) IS DISTINCT FROM 'on') THEN
    RAISE EXCEPTION 'operator_earned is kept by the triggers on usage_records and transfers: % is not allowed', TG_OP
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER operator_earned_kept BEFORE INSERT OR UPDATE OR DELETE ON operator_earned
  FOR EACH STATEMENT EXECUTE FUNCTION operator_earned_guard();
--> statement-breakpoint
CREATE TRIGGER operator_earned_no_truncate BEFORE TRUNCATE ON operator_earned
  FOR EACH STATEMENT EXECUTE FUNCTION operator_earned_guard();
--> statement-breakpoint
-- Folds the parts of each key that has parts not yet folded into one (folded) and drops keys that
-- sum to nothing; returns how many parts it removed. It reads only those keys (a partial index), so
-- its work follows what was written since the last fold, not the size of the table. It deletes only
-- the parts it sees and inserts their sum in the same statement, so a read (one snapshot) sees the
-- parts before or the sum after, and a concurrent fold skips what this one deleted. Writers only
-- insert: they never wait for a fold, nor a fold for them.
CREATE FUNCTION fold_operator_earned() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  removed bigint;
BEGIN
  PERFORM set_config('ledger.folding_operator_earned', 'on', true);
  WITH keys AS (SELECT DISTINCT marketplace_id, operator_id, asset_id FROM operator_earned WHERE NOT folded),
       gone AS (DELETE FROM operator_earned e USING keys k
                 WHERE e.operator_id = k.operator_id AND e.asset_id = k.asset_id AND e.marketplace_id = k.marketplace_id
             RETURNING e.marketplace_id, e.operator_id, e.asset_id, e.amount),
       sums AS (INSERT INTO operator_earned (marketplace_id, operator_id, asset_id, amount, folded)
                SELECT marketplace_id, operator_id, asset_id, sum(amount), true FROM gone
                 GROUP BY marketplace_id, operator_id, asset_id
                HAVING sum(amount) <> 0
                RETURNING 1)
  SELECT (SELECT count(*) FROM gone) - (SELECT count(*) FROM sums) INTO removed;
  PERFORM set_config('ledger.folding_operator_earned', 'off', true);
  RETURN removed;
END $$;
