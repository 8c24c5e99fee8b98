DROP INDEX "holds_close_transfer_idx";--> statement-breakpoint
CREATE INDEX "transfers_events_idx" ON "transfers" USING btree ("txid") WHERE "transfers"."idempotency_key" not like 'usage:%';