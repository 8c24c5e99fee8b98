-- Custom SQL migration file, put your code below! ---- Who did what is history: the audit log and credited deposits are never edited.
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER chain_deposits_append_only BEFORE UPDATE OR DELETE ON chain_deposits
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
