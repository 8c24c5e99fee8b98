-- Custom SQL migration file, put your code below! ---- Rated usage is history: corrections are reversal transfers, never edits.
CREATE TRIGGER usage_records_append_only BEFORE UPDATE OR DELETE ON usage_records
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER usage_records_no_truncate BEFORE TRUNCATE ON usage_records
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER fee_schedules_append_only BEFORE UPDATE OR DELETE ON fee_schedules
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
