DROP INDEX "usage_batches_key_uq";--> statement-breakpoint
ALTER TABLE "usage_batches" ADD COLUMN "tenant" text;--> statement-breakpoint
CREATE UNIQUE INDEX "usage_batches_key_uq" ON "usage_batches" USING btree ("marketplace_id","tenant","idempotency_key");