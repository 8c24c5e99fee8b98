-- A rate lock gives back the share of a usage record that is reversed (docs/settlement.md, "Rate
-- policy"): otherwise a record posted, locked and reversed left a lock at its rate for the
-- operator's next earnings, a free option on the token's price. The records each lock was made
-- from are kept (rate_lock_records, by the pass that took them from the queue), and `released`
-- rises, as `consumed` does, never by hand.
ALTER TABLE "rate_locks" ADD COLUMN "released" numeric(78, 0) DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "rate_locks" ADD COLUMN "pass_id" uuid;--> statement-breakpoint
ALTER TABLE "rate_locks" ADD COLUMN "pass_total" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "rate_locks" DROP CONSTRAINT "rate_locks_amounts";--> statement-breakpoint
ALTER TABLE "rate_locks" ADD CONSTRAINT "rate_locks_amounts" CHECK ("rate_locks"."amount" > 0 and "rate_locks"."consumed" >= 0 and "rate_locks"."released" >= 0 and "rate_locks"."consumed" + "rate_locks"."released" <= "rate_locks"."amount");--> statement-breakpoint
DROP INDEX "rate_locks_open_idx";--> statement-breakpoint
CREATE INDEX "rate_locks_open_idx" ON "rate_locks" USING btree ("operator_id","from_asset_id","to_asset_id","locked_at","id") WHERE "rate_locks"."consumed" + "rate_locks"."released" < "rate_locks"."amount";--> statement-breakpoint
CREATE INDEX "rate_locks_pass_idx" ON "rate_locks" USING btree ("pass_id") WHERE "rate_locks"."pass_id" is not null;--> statement-breakpoint
CREATE TABLE "rate_lock_records" (
	"usage_id" uuid PRIMARY KEY NOT NULL,
	"pass_id" uuid NOT NULL,
	"net" numeric(78, 0) NOT NULL
);--> statement-breakpoint
-- Only `consumed` (conversions) and `released` (reversals) change, and only upwards.
CREATE OR REPLACE FUNCTION rate_locks_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR (to_jsonb(NEW) - 'consumed' - 'released') <> (to_jsonb(OLD) - 'consumed' - 'released')
     OR NEW.consumed < OLD.consumed OR NEW.released < OLD.released THEN
    RAISE EXCEPTION 'rate_locks: % may only raise consumed or released', TG_OP
      USING ERRCODE = 'insufficient_privilege', HINT = 'a rate lock is used up by conversions and given back by reversals, never edited';
  END IF;
  RETURN NEW;
END;
$$;--> statement-breakpoint
-- A reversal of a usage record: not locked yet, it leaves the queue; locked, each lock made with it
-- gives back its share (the lock's amount × the record's net ÷ the pass's total, rounded down) of
-- what is left of the lock. What a payout already used of that lock (oldest first, for whatever
-- earnings it paid) is given back from the operator's other open locks of the pair, newest first:
-- the open locks shrink by the record's whole share, so none is left without earnings behind it.
-- What no open lock can give back (its share was used and nothing of the pair is open) is taken
-- care of when the next locks of the pair are made (src/db/queries/rate-locks.ts, sweepLocks).
-- Rows are locked as they are read; what conversions already used stays used.
CREATE FUNCTION rate_locks_follow_reversal() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s record;
  o record;
  open_amount numeric;
  part numeric;
  short numeric;
BEGIN
  DELETE FROM rate_lock_queue q USING usage_records u WHERE u.transfer_id = NEW.reverses_id AND q.usage_id = u.id AND q.marketplace_id = u.marketplace_id;
  FOR s IN SELECT l.id, l.operator_id, l.from_asset_id, l.to_asset_id, div(l.amount * r.net, l.pass_total) AS share
             FROM rate_lock_records r JOIN usage_records u ON u.id = r.usage_id JOIN rate_locks l ON l.pass_id = r.pass_id
            WHERE u.transfer_id = NEW.reverses_id AND l.pass_total > 0
            ORDER BY l.id
  LOOP
    SELECT l.amount - l.consumed - l.released INTO open_amount FROM rate_locks l WHERE l.id = s.id FOR UPDATE;
    part := least(open_amount, s.share);
    IF part > 0 THEN
      UPDATE rate_locks SET released = released + part WHERE id = s.id;
    END IF;
    short := s.share - part;
    FOR o IN SELECT l.id, l.amount - l.consumed - l.released AS open_amount
               FROM rate_locks l
              WHERE l.operator_id = s.operator_id AND l.from_asset_id = s.from_asset_id AND l.to_asset_id = s.to_asset_id
                AND l.consumed + l.released < l.amount AND l.id <> s.id
              ORDER BY l.locked_at DESC, l.id DESC
                FOR UPDATE
    LOOP
      EXIT WHEN short <= 0;
      part := least(o.open_amount, short);
      UPDATE rate_locks SET released = released + part WHERE id = o.id;
      short := short - part;
    END LOOP;
  END LOOP;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER transfers_rate_locks AFTER INSERT ON transfers
  FOR EACH ROW WHEN (NEW.reverses_id IS NOT NULL) EXECUTE FUNCTION rate_locks_follow_reversal();--> statement-breakpoint
-- Records reversed before this migration and still queued: never to be locked (creating the trigger
-- above took the lock that keeps new transfers waiting until this commits, so none is missed).
DELETE FROM rate_lock_queue q USING usage_records u
 WHERE q.usage_id = u.id AND q.marketplace_id = u.marketplace_id
   AND EXISTS (SELECT 1 FROM transfers t WHERE t.reverses_id = u.transfer_id);
