CREATE TABLE "usage_funding_mark_customers" (
	"marketplace_id" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"gross" numeric(78, 0) NOT NULL,
	CONSTRAINT "usage_funding_mark_customers_marketplace_id_asset_id_customer_id_pk" PRIMARY KEY("marketplace_id","asset_id","customer_id")
);
--> statement-breakpoint
CREATE TABLE "usage_funding_marks" (
	"marketplace_id" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"funding_seq" bigint NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "usage_funding_marks_marketplace_id_asset_id_pk" PRIMARY KEY("marketplace_id","asset_id")
);
--> statement-breakpoint
CREATE INDEX "usage_records_funding_seq_idx" ON "usage_records" USING brin ("funding_seq");--> statement-breakpoint
-- Written only by the workers' mark step (src/db/queries/funding-marks.ts), which sets
-- ledger.marking_usage_funding for its transaction: a mark changed by hand could make usage look
-- funded. The guard stops mistakes, not a session that sets the flag as the step does or turns
-- triggers off (a role that can do that can write any table): `npm run verify` names a wrong mark.
CREATE FUNCTION usage_funding_marks_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' OR current_setting('ledger.marking_usage_funding', true) IS DISTINCT FROM 'on' THEN
    RAISE EXCEPTION '% is kept by the workers'' funding mark step: % is not allowed', TG_TABLE_NAME, TG_OP
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER usage_funding_marks_kept BEFORE INSERT OR UPDATE OR DELETE ON usage_funding_marks
  FOR EACH STATEMENT EXECUTE FUNCTION usage_funding_marks_guard();
--> statement-breakpoint
CREATE TRIGGER usage_funding_marks_no_truncate BEFORE TRUNCATE ON usage_funding_marks
  FOR EACH STATEMENT EXECUTE FUNCTION usage_funding_marks_guard();
--> statement-breakpoint
CREATE TRIGGER usage_funding_mark_customers_kept BEFORE INSERT OR UPDATE OR DELETE ON usage_funding_mark_customers
  FOR EACH STATEMENT EXECUTE FUNCTION usage_funding_marks_guard();
--> statement-breakpoint
CREATE TRIGGER usage_funding_mark_customers_no_truncate BEFORE TRUNCATE ON usage_funding_mark_customers
  FOR EACH STATEMENT EXECUTE FUNCTION usage_funding_marks_guard();
