CREATE TABLE "balance_monitors" (
	"id" uuid PRIMARY KEY NOT NULL,
	"marketplace_id" text,
	"operator_id" text,
	"account_id" uuid NOT NULL,
	"direction" text NOT NULL,
	"balance" text NOT NULL,
	"threshold" numeric(78, 0) NOT NULL,
	"hysteresis" numeric(78, 0) NOT NULL,
	"state" text DEFAULT 'ok' NOT NULL,
	"last_balance" numeric(78, 0),
	"changed_at" timestamp with time zone,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "balance_monitors_direction" CHECK ("balance_monitors"."direction" in ('below', 'above')),
	CONSTRAINT "balance_monitors_balance" CHECK ("balance_monitors"."balance" in ('posted', 'available')),
	CONSTRAINT "balance_monitors_state" CHECK ("balance_monitors"."state" in ('ok', 'crossed')),
	CONSTRAINT "balance_monitors_hysteresis" CHECK ("balance_monitors"."hysteresis" >= 0)
);
--> statement-breakpoint
CREATE TABLE "event_relay" (
	"id" integer PRIMARY KEY NOT NULL,
	"watermark" bigint NOT NULL,
	"last_position" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "event_relay_single" CHECK ("event_relay"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE "events" (
	"position" bigint PRIMARY KEY NOT NULL,
	"id" text NOT NULL,
	"type" text NOT NULL,
	"marketplace_id" text,
	"operator_id" text,
	"resource_type" text NOT NULL,
	"resource_id" text NOT NULL,
	"data" jsonb NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "accounting_periods" ADD COLUMN "txid" bigint;--> statement-breakpoint
ALTER TABLE "accounting_periods" ALTER COLUMN "txid" SET DEFAULT (pg_current_xact_id()::text)::bigint;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "txid" bigint;--> statement-breakpoint
ALTER TABLE "holds" ALTER COLUMN "txid" SET DEFAULT (pg_current_xact_id()::text)::bigint;--> statement-breakpoint
ALTER TABLE "payout_events" ADD COLUMN "txid" bigint;--> statement-breakpoint
ALTER TABLE "payout_events" ALTER COLUMN "txid" SET DEFAULT (pg_current_xact_id()::text)::bigint;--> statement-breakpoint
ALTER TABLE "proposals" ADD COLUMN "txid" bigint;--> statement-breakpoint
ALTER TABLE "proposals" ALTER COLUMN "txid" SET DEFAULT (pg_current_xact_id()::text)::bigint;--> statement-breakpoint
ALTER TABLE "reconciliation_items" ADD COLUMN "txid" bigint;--> statement-breakpoint
ALTER TABLE "reconciliation_items" ALTER COLUMN "txid" SET DEFAULT (pg_current_xact_id()::text)::bigint;--> statement-breakpoint
ALTER TABLE "reconciliations" ADD COLUMN "txid" bigint;--> statement-breakpoint
ALTER TABLE "reconciliations" ALTER COLUMN "txid" SET DEFAULT (pg_current_xact_id()::text)::bigint;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "txid" bigint;--> statement-breakpoint
ALTER TABLE "usage_records" ALTER COLUMN "txid" SET DEFAULT (pg_current_xact_id()::text)::bigint;--> statement-breakpoint
ALTER TABLE "balance_monitors" ADD CONSTRAINT "balance_monitors_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "balance_monitors_account_idx" ON "balance_monitors" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "balance_monitors_marketplace_idx" ON "balance_monitors" USING btree ("marketplace_id","id");--> statement-breakpoint
CREATE INDEX "balance_monitors_operator_idx" ON "balance_monitors" USING btree ("operator_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "events_id_uq" ON "events" USING btree ("id");--> statement-breakpoint
CREATE INDEX "events_marketplace_idx" ON "events" USING btree ("marketplace_id","position");--> statement-breakpoint
CREATE INDEX "events_operator_idx" ON "events" USING btree ("operator_id","position");--> statement-breakpoint
CREATE INDEX "events_type_idx" ON "events" USING btree ("type","position");--> statement-breakpoint
CREATE INDEX "events_resource_idx" ON "events" USING btree ("resource_type","resource_id","position");--> statement-breakpoint
CREATE INDEX "accounting_periods_txid_idx" ON "accounting_periods" USING btree ("txid");--> statement-breakpoint
CREATE INDEX "holds_txid_idx" ON "holds" USING btree ("txid");--> statement-breakpoint
CREATE INDEX "holds_close_transfer_idx" ON "holds" USING btree ("close_transfer_id") WHERE "holds"."close_transfer_id" is not null;--> statement-breakpoint
CREATE INDEX "payout_events_txid_idx" ON "payout_events" USING btree ("txid");--> statement-breakpoint
CREATE INDEX "proposals_txid_idx" ON "proposals" USING btree ("txid");--> statement-breakpoint
CREATE INDEX "reconciliation_items_txid_idx" ON "reconciliation_items" USING btree ("txid");--> statement-breakpoint
CREATE INDEX "reconciliations_txid_idx" ON "reconciliations" USING btree ("txid");--> statement-breakpoint
CREATE INDEX "usage_records_txid_idx" ON "usage_records" USING brin ("txid");--> statement-breakpoint
-- Hand-written. The txid columns are added without a default first and given it after, so that
-- existing rows keep NULL (they precede the relay's first watermark) and the tables are not
-- rewritten: a volatile default on ADD COLUMN would rewrite every row.
-- Rows of the state tables whose status changes (holds closed, proposals decided, periods closed)
-- carry the txid of the transaction that last changed their status.
CREATE FUNCTION set_row_txid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.txid := (pg_current_xact_id()::text)::bigint;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER holds_txid BEFORE UPDATE ON holds FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION set_row_txid();--> statement-breakpoint
CREATE TRIGGER proposals_txid BEFORE UPDATE ON proposals FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION set_row_txid();--> statement-breakpoint
CREATE TRIGGER accounting_periods_txid BEFORE UPDATE ON accounting_periods FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION set_row_txid();--> statement-breakpoint
-- The relay starts at this migration: history before it is not replayed as events.
INSERT INTO event_relay (id, watermark, last_position) VALUES (1, (pg_current_xact_id()::text)::bigint, 0);--> statement-breakpoint
-- The event log is append-only.
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events are append-only';
END
$$;--> statement-breakpoint
CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events FOR EACH ROW EXECUTE FUNCTION events_append_only();--> statement-breakpoint
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();
