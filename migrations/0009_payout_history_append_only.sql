-- Custom SQL migration file, put your code below! ---- Payout history and address changes are an audit trail: never edited.
CREATE TRIGGER payout_events_append_only BEFORE UPDATE OR DELETE ON payout_events
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER payout_address_events_append_only BEFORE UPDATE OR DELETE ON payout_address_events
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER chain_tx_attempts_no_delete BEFORE DELETE ON chain_tx_attempts
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
