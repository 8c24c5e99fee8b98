CREATE TABLE "conversions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"transfer_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"payout_id" uuid,
	"child_payout_id" uuid,
	"operator_id" text,
	"marketplace_id" text,
	"customer_id" text,
	"from_asset_id" uuid NOT NULL,
	"to_asset_id" uuid NOT NULL,
	"bps" integer NOT NULL,
	"part" numeric(78, 0) NOT NULL,
	"used" numeric(78, 0) NOT NULL,
	"remainder" numeric(78, 0) NOT NULL,
	"to_amount" numeric(78, 0) NOT NULL,
	"rate_num" numeric(78, 0) NOT NULL,
	"rate_den" numeric(78, 0) NOT NULL,
	"rate_id" uuid,
	"revaluation" numeric(78, 0) DEFAULT '0' NOT NULL,
	"converted_at" timestamp with time zone NOT NULL,
	CONSTRAINT "conversions_amounts" CHECK ("conversions"."used" >= 0 and "conversions"."remainder" >= 0 and "conversions"."to_amount" >= 0 and "conversions"."used" + "conversions"."remainder" = "conversions"."part"),
	CONSTRAINT "conversions_kind" CHECK (("conversions"."kind" = 'payout' and "conversions"."payout_id" is not null and "conversions"."operator_id" is not null and "conversions"."customer_id" is null)
       or ("conversions"."kind" = 'deposit' and "conversions"."marketplace_id" is not null and "conversions"."customer_id" is not null and "conversions"."payout_id" is null))
);
--> statement-breakpoint
CREATE TABLE "payout_preferences" (
	"operator_id" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"splits" jsonb NOT NULL,
	"set_by" text NOT NULL,
	"set_at" timestamp with time zone NOT NULL,
	"request_id" text,
	CONSTRAINT "payout_preferences_version" CHECK ("payout_preferences"."version" >= 1)
);
--> statement-breakpoint
CREATE TABLE "rates" (
	"id" uuid PRIMARY KEY NOT NULL,
	"base_asset_id" uuid NOT NULL,
	"quote_asset_id" uuid NOT NULL,
	"num" numeric(78, 0) NOT NULL,
	"den" numeric(78, 0) NOT NULL,
	"observed_at" timestamp with time zone NOT NULL,
	"source" text NOT NULL,
	"source_ref" text NOT NULL,
	"recorded_at" timestamp with time zone NOT NULL,
	CONSTRAINT "rates_positive" CHECK ("rates"."num" > 0 and "rates"."den" > 0),
	CONSTRAINT "rates_source" CHECK ("rates"."source" in ('feed', 'manual')),
	CONSTRAINT "rates_pair" CHECK ("rates"."base_asset_id" <> "rates"."quote_asset_id")
);
--> statement-breakpoint
ALTER TABLE "payouts" DROP CONSTRAINT "payouts_status";--> statement-breakpoint
ALTER TABLE "payouts" DROP CONSTRAINT "payouts_settlement";--> statement-breakpoint
ALTER TABLE "assets" ADD COLUMN "rate_max_age_seconds" integer DEFAULT 3600 NOT NULL;--> statement-breakpoint
ALTER TABLE "assets" ADD COLUMN "rate_max_deviation_bps" integer DEFAULT 100 NOT NULL;--> statement-breakpoint
ALTER TABLE "marketplaces" ADD COLUMN "pricing_asset_id" uuid;--> statement-breakpoint
ALTER TABLE "marketplaces" ADD COLUMN "pricing_set_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "payouts" ADD COLUMN "splits" jsonb;--> statement-breakpoint
ALTER TABLE "payouts" ADD COLUMN "parent_payout_id" uuid;--> statement-breakpoint
ALTER TABLE "conversions" ADD CONSTRAINT "conversions_from_asset_id_assets_id_fk" FOREIGN KEY ("from_asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversions" ADD CONSTRAINT "conversions_to_asset_id_assets_id_fk" FOREIGN KEY ("to_asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversions" ADD CONSTRAINT "conversions_rate_id_rates_id_fk" FOREIGN KEY ("rate_id") REFERENCES "public"."rates"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_preferences" ADD CONSTRAINT "payout_preferences_operator_id_operators_id_fk" FOREIGN KEY ("operator_id") REFERENCES "public"."operators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_preferences" ADD CONSTRAINT "payout_preferences_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rates" ADD CONSTRAINT "rates_base_asset_id_assets_id_fk" FOREIGN KEY ("base_asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rates" ADD CONSTRAINT "rates_quote_asset_id_assets_id_fk" FOREIGN KEY ("quote_asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "conversions_transfer_pair_uq" ON "conversions" USING btree ("transfer_id","from_asset_id","to_asset_id");--> statement-breakpoint
CREATE INDEX "conversions_payout_idx" ON "conversions" USING btree ("payout_id");--> statement-breakpoint
CREATE INDEX "conversions_operator_idx" ON "conversions" USING btree ("operator_id","converted_at");--> statement-breakpoint
CREATE INDEX "conversions_customer_idx" ON "conversions" USING btree ("marketplace_id","to_asset_id","customer_id");--> statement-breakpoint
CREATE UNIQUE INDEX "payout_preferences_version_uq" ON "payout_preferences" USING btree ("operator_id","asset_id","version");--> statement-breakpoint
CREATE UNIQUE INDEX "rates_source_ref_uq" ON "rates" USING btree ("source","source_ref");--> statement-breakpoint
CREATE INDEX "rates_pair_idx" ON "rates" USING btree ("base_asset_id","quote_asset_id","observed_at");--> statement-breakpoint
ALTER TABLE "marketplaces" ADD CONSTRAINT "marketplaces_pricing_asset_id_assets_id_fk" FOREIGN KEY ("pricing_asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "payouts_convert_queue_idx" ON "payouts" USING btree ("created_at") WHERE "payouts"."status" = 'pending' and "payouts"."settlement" = 'convert';--> statement-breakpoint
ALTER TABLE "assets" ADD CONSTRAINT "assets_rate_bounds" CHECK ("assets"."rate_max_age_seconds" between 1 and 31536000 and "assets"."rate_max_deviation_bps" between 0 and 10000);--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_status" CHECK ("payouts"."status" in ('pending', 'batched', 'signed', 'submitted', 'confirmed', 'failed', 'converted'));--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_settlement" CHECK ("payouts"."settlement" in ('evm', 'none', 'convert') and ("payouts"."settlement" = 'evm') = ("payouts"."chain_id" is not null) and ("payouts"."settlement" = 'convert') = ("payouts"."splits" is not null));--> statement-breakpoint
-- Rates, payout preferences and conversions are history: never edited, never deleted.
CREATE TRIGGER rates_append_only BEFORE UPDATE OR DELETE ON rates
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER rates_no_truncate BEFORE TRUNCATE ON rates
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER payout_preferences_append_only BEFORE UPDATE OR DELETE ON payout_preferences
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER payout_preferences_no_truncate BEFORE TRUNCATE ON payout_preferences
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER conversions_append_only BEFORE UPDATE OR DELETE ON conversions
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER conversions_no_truncate BEFORE TRUNCATE ON conversions
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
