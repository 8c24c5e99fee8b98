-- Custom SQL migration file, put your code below! --
-- What a payout pays, to whom and from which hold is fixed when it is created: the worker pays the
-- row, so an edited amount or address would pay what the ledger never held, where the operator never
-- proved. Only its progress (status, chain transaction, settlement facts, notes) changes afterwards;
-- a payout is never deleted.
CREATE FUNCTION payouts_money_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'payouts cannot be deleted' USING ERRCODE = 'insufficient_privilege', HINT = 'fail the payout: its hold is voided';
  END IF;
  IF (NEW.id, NEW.operator_id, NEW.asset_id, NEW.settlement, NEW.chain_id, NEW.to_address, NEW.amount,
      NEW.hold_transfer_id, NEW.splits, NEW.parent_payout_id)
     IS DISTINCT FROM
     (OLD.id, OLD.operator_id, OLD.asset_id, OLD.settlement, OLD.chain_id, OLD.to_address, OLD.amount,
      OLD.hold_transfer_id, OLD.splits, OLD.parent_payout_id) THEN
    RAISE EXCEPTION 'what a payout pays (operator, asset, settlement, chain, address, amount, hold, splits) cannot change'
      USING ERRCODE = 'insufficient_privilege', HINT = 'fail the payout and create another';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER payouts_money_fixed BEFORE UPDATE OR DELETE ON payouts
  FOR EACH ROW EXECUTE FUNCTION payouts_money_fixed();
--> statement-breakpoint
CREATE TRIGGER payouts_no_truncate BEFORE TRUNCATE ON payouts
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
