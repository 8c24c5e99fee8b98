CREATE TABLE "dispute_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"dispute_id" uuid NOT NULL,
	"status" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"by" text NOT NULL,
	"detail" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dispute_items" (
	"dispute_id" uuid NOT NULL,
	"usage_id" uuid NOT NULL,
	"operator_id" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"net" numeric(78, 0) NOT NULL,
	"open" boolean DEFAULT true NOT NULL,
	CONSTRAINT "dispute_items_dispute_id_usage_id_pk" PRIMARY KEY("dispute_id","usage_id"),
	CONSTRAINT "dispute_items_net" CHECK ("dispute_items"."net" >= 0)
);
--> statement-breakpoint
CREATE TABLE "disputes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"marketplace_id" text NOT NULL,
	"status" text NOT NULL,
	"reason" text NOT NULL,
	"opened_by" text NOT NULL,
	"opened_at" timestamp with time zone NOT NULL,
	"decided_by" text,
	"decided_at" timestamp with time zone,
	"decision_note" text,
	CONSTRAINT "disputes_status" CHECK ("disputes"."status" in ('open', 'upheld', 'rejected')),
	CONSTRAINT "disputes_decided" CHECK (("disputes"."status" = 'open') = ("disputes"."decided_at" is null) and ("disputes"."decided_at" is null) = ("disputes"."decided_by" is null))
);
--> statement-breakpoint
CREATE TABLE "marketplace_dispute_settings" (
	"marketplace_id" text PRIMARY KEY NOT NULL,
	"dispute_window_days" integer NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "marketplace_dispute_settings_window" CHECK ("marketplace_dispute_settings"."dispute_window_days" between 0 and 3650)
);
--> statement-breakpoint
ALTER TABLE "dispute_events" ADD CONSTRAINT "dispute_events_dispute_id_disputes_id_fk" FOREIGN KEY ("dispute_id") REFERENCES "public"."disputes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dispute_items" ADD CONSTRAINT "dispute_items_dispute_id_disputes_id_fk" FOREIGN KEY ("dispute_id") REFERENCES "public"."disputes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dispute_items" ADD CONSTRAINT "dispute_items_usage_id_usage_records_id_fk" FOREIGN KEY ("usage_id") REFERENCES "public"."usage_records"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dispute_items" ADD CONSTRAINT "dispute_items_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "disputes" ADD CONSTRAINT "disputes_marketplace_id_marketplaces_id_fk" FOREIGN KEY ("marketplace_id") REFERENCES "public"."marketplaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_dispute_settings" ADD CONSTRAINT "marketplace_dispute_settings_marketplace_id_marketplaces_id_fk" FOREIGN KEY ("marketplace_id") REFERENCES "public"."marketplaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "dispute_events_dispute_idx" ON "dispute_events" USING btree ("dispute_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "dispute_items_open_usage_uq" ON "dispute_items" USING btree ("usage_id") WHERE "dispute_items"."open";--> statement-breakpoint
CREATE INDEX "dispute_items_operator_idx" ON "dispute_items" USING btree ("operator_id","asset_id") WHERE "dispute_items"."open";--> statement-breakpoint
CREATE INDEX "dispute_items_usage_idx" ON "dispute_items" USING btree ("usage_id");--> statement-breakpoint
CREATE INDEX "disputes_marketplace_idx" ON "disputes" USING btree ("marketplace_id","id");--> statement-breakpoint
CREATE INDEX "disputes_open_idx" ON "disputes" USING btree ("id") WHERE "disputes"."status" = 'open';--> statement-breakpoint
-- A dispute's history is never rewritten: its events are append-only; a dispute changes once, from
-- open to decided (who, when, why), and its items only close (open: true → false).
CREATE TRIGGER dispute_events_append_only BEFORE UPDATE OR DELETE ON dispute_events
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER dispute_events_no_truncate BEFORE TRUNCATE ON dispute_events
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE FUNCTION ledger_disputes_decided_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'disputes cannot be deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF OLD.status <> 'open'
     OR (NEW.id, NEW.marketplace_id, NEW.reason, NEW.opened_by, NEW.opened_at) IS DISTINCT FROM (OLD.id, OLD.marketplace_id, OLD.reason, OLD.opened_by, OLD.opened_at) THEN
    RAISE EXCEPTION 'a dispute is decided once; what was disputed never changes' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER disputes_decided_once BEFORE UPDATE OR DELETE ON disputes
  FOR EACH ROW EXECUTE FUNCTION ledger_disputes_decided_once();
--> statement-breakpoint
CREATE TRIGGER disputes_no_truncate BEFORE TRUNCATE ON disputes
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE FUNCTION ledger_dispute_items_close_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'dispute items cannot be deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF NOT OLD.open OR NEW.open
     OR (NEW.dispute_id, NEW.usage_id, NEW.operator_id, NEW.asset_id, NEW.net) IS DISTINCT FROM (OLD.dispute_id, OLD.usage_id, OLD.operator_id, OLD.asset_id, OLD.net) THEN
    RAISE EXCEPTION 'a dispute item only closes, once' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER dispute_items_close_only BEFORE UPDATE OR DELETE ON dispute_items
  FOR EACH ROW EXECUTE FUNCTION ledger_dispute_items_close_only();
--> statement-breakpoint
CREATE TRIGGER dispute_items_no_truncate BEFORE TRUNCATE ON dispute_items
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
