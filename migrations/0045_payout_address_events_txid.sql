-- Changes made before this migration keep no transaction id: they are not announced again as events.
ALTER TABLE "payout_address_events" ADD COLUMN "txid" bigint;--> statement-breakpoint
ALTER TABLE "payout_address_events" ALTER COLUMN "txid" SET DEFAULT (pg_current_xact_id()::text)::bigint;--> statement-breakpoint
CREATE INDEX "payout_address_events_txid_idx" ON "payout_address_events" USING btree ("txid");
