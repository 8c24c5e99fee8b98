CREATE TABLE "funds_receipts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"marketplace_id" text NOT NULL,
	"customer_id" text,
	"asset_id" uuid NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"reference" text NOT NULL,
	"transfer_id" uuid NOT NULL,
	"proposal_id" uuid NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	CONSTRAINT "funds_receipts_amount" CHECK ("funds_receipts"."amount" > 0)
);
--> statement-breakpoint
CREATE TABLE "marketplace_credit_limits" (
	"marketplace_id" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"credit_limit" numeric(78, 0) NOT NULL,
	"proposal_id" uuid NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "marketplace_credit_limits_marketplace_id_asset_id_pk" PRIMARY KEY("marketplace_id","asset_id"),
	CONSTRAINT "marketplace_credit_limits_amount" CHECK ("marketplace_credit_limits"."credit_limit" >= 0)
);
--> statement-breakpoint
CREATE TABLE "proposals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"marketplace_id" text,
	"payload" jsonb NOT NULL,
	"proposed_by" text NOT NULL,
	"proposed_at" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'proposed' NOT NULL,
	"decided_by" text,
	"decided_at" timestamp with time zone,
	"reason" text,
	"result" jsonb,
	CONSTRAINT "proposals_status" CHECK ("proposals"."status" in ('proposed', 'approved', 'rejected')),
	CONSTRAINT "proposals_decided" CHECK (("proposals"."status" = 'proposed') = ("proposals"."decided_by" is null)),
	CONSTRAINT "proposals_four_eyes" CHECK ("proposals"."decided_by" is null or "proposals"."decided_by" <> "proposals"."proposed_by")
);
--> statement-breakpoint
ALTER TABLE "funds_receipts" ADD CONSTRAINT "funds_receipts_marketplace_id_marketplaces_id_fk" FOREIGN KEY ("marketplace_id") REFERENCES "public"."marketplaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "funds_receipts" ADD CONSTRAINT "funds_receipts_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_credit_limits" ADD CONSTRAINT "marketplace_credit_limits_marketplace_id_marketplaces_id_fk" FOREIGN KEY ("marketplace_id") REFERENCES "public"."marketplaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_credit_limits" ADD CONSTRAINT "marketplace_credit_limits_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "funds_receipts_marketplace_idx" ON "funds_receipts" USING btree ("marketplace_id","asset_id");--> statement-breakpoint
CREATE INDEX "proposals_status_idx" ON "proposals" USING btree ("status","proposed_at");--> statement-breakpoint
-- Money received is history: a receipt is never edited (a mistake is corrected by a new, approved movement).
CREATE TRIGGER funds_receipts_append_only BEFORE UPDATE OR DELETE ON funds_receipts
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER funds_receipts_no_truncate BEFORE TRUNCATE ON funds_receipts
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
