-- Posted history is never rewritten: transfers and entries reject UPDATE, DELETE and TRUNCATE.
-- Mistakes are corrected by reversal transfers that reference the original.
CREATE FUNCTION ledger_reject_mutation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger table % is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'insufficient_privilege', HINT = 'correct mistakes with a reversal transfer';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER transfers_append_only BEFORE UPDATE OR DELETE ON transfers
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER transfers_no_truncate BEFORE TRUNCATE ON transfers
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER entries_append_only BEFORE UPDATE OR DELETE ON entries
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER entries_no_truncate BEFORE TRUNCATE ON entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER journal_seals_append_only BEFORE UPDATE OR DELETE ON journal_seals
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER journal_seals_no_truncate BEFORE TRUNCATE ON journal_seals
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
-- An account's identity, asset, side and limits are fixed at creation; only metadata may change.
CREATE FUNCTION ledger_accounts_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'accounts cannot be deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF (NEW.id, NEW.asset_id, NEW.ref, NEW.code, NEW.owner_type, NEW.owner_id, NEW.normal_side,
      NEW.debits_must_not_exceed_credits, NEW.credits_must_not_exceed_debits, NEW.created_at)
     IS DISTINCT FROM
     (OLD.id, OLD.asset_id, OLD.ref, OLD.code, OLD.owner_type, OLD.owner_id, OLD.normal_side,
      OLD.debits_must_not_exceed_credits, OLD.credits_must_not_exceed_debits, OLD.created_at) THEN
    RAISE EXCEPTION 'only the metadata of an account may change' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER accounts_fixed BEFORE UPDATE OR DELETE ON accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_accounts_fixed();
--> statement-breakpoint
-- Balance rows are updated once per account per batch; free space per page keeps those updates HOT.
ALTER TABLE account_balances SET (fillfactor = 50);
