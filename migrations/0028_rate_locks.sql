CREATE TABLE "rate_lock_queue" (
	"usage_id" uuid PRIMARY KEY NOT NULL,
	"marketplace_id" text NOT NULL,
	"operator_id" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"net" numeric(78, 0) NOT NULL,
	"queued_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_locks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"marketplace_id" text NOT NULL,
	"operator_id" text NOT NULL,
	"from_asset_id" uuid NOT NULL,
	"to_asset_id" uuid NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"consumed" numeric(78, 0) DEFAULT '0' NOT NULL,
	"rate_num" numeric(78, 0) NOT NULL,
	"rate_den" numeric(78, 0) NOT NULL,
	"rate_id" uuid NOT NULL,
	"records" numeric NOT NULL,
	"earned_from" timestamp with time zone NOT NULL,
	"locked_at" timestamp with time zone NOT NULL,
	CONSTRAINT "rate_locks_amounts" CHECK ("rate_locks"."amount" > 0 and "rate_locks"."consumed" >= 0 and "rate_locks"."consumed" <= "rate_locks"."amount"),
	CONSTRAINT "rate_locks_rate" CHECK ("rate_locks"."rate_num" > 0 and "rate_locks"."rate_den" > 0 and "rate_locks"."from_asset_id" <> "rate_locks"."to_asset_id")
);
--> statement-breakpoint
ALTER TABLE "conversions" ADD COLUMN "rate_lock_id" uuid;--> statement-breakpoint
ALTER TABLE "marketplaces" ADD COLUMN "rate_policy" text DEFAULT 'at_payout' NOT NULL;--> statement-breakpoint
ALTER TABLE "rate_locks" ADD CONSTRAINT "rate_locks_from_asset_id_assets_id_fk" FOREIGN KEY ("from_asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rate_locks" ADD CONSTRAINT "rate_locks_to_asset_id_assets_id_fk" FOREIGN KEY ("to_asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rate_locks" ADD CONSTRAINT "rate_locks_rate_id_rates_id_fk" FOREIGN KEY ("rate_id") REFERENCES "public"."rates"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "rate_lock_queue_group_idx" ON "rate_lock_queue" USING btree ("marketplace_id","operator_id","asset_id");--> statement-breakpoint
CREATE INDEX "rate_locks_open_idx" ON "rate_locks" USING btree ("operator_id","from_asset_id","to_asset_id","locked_at","id") WHERE "rate_locks"."consumed" < "rate_locks"."amount";--> statement-breakpoint
CREATE INDEX "rate_locks_operator_idx" ON "rate_locks" USING btree ("operator_id","locked_at");--> statement-breakpoint
CREATE INDEX "conversions_rate_lock_idx" ON "conversions" USING btree ("rate_lock_id") WHERE "conversions"."rate_lock_id" is not null;--> statement-breakpoint
ALTER TABLE "marketplaces" ADD CONSTRAINT "marketplaces_rate_policy" CHECK ("marketplaces"."rate_policy" in ('at_payout', 'at_earning'));--> statement-breakpoint
-- A rate lock is a promise to an operator: never deleted; only `consumed` changes, and only upwards.
CREATE FUNCTION rate_locks_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR (to_jsonb(NEW) - 'consumed') <> (to_jsonb(OLD) - 'consumed') OR NEW.consumed < OLD.consumed THEN
    RAISE EXCEPTION 'rate_locks: % may only raise consumed', TG_OP
      USING ERRCODE = 'insufficient_privilege', HINT = 'a rate lock is used up by conversions, never edited';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER rate_locks_guard BEFORE UPDATE OR DELETE ON rate_locks
  FOR EACH ROW EXECUTE FUNCTION rate_locks_guard();
--> statement-breakpoint
CREATE TRIGGER rate_locks_no_truncate BEFORE TRUNCATE ON rate_locks
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
