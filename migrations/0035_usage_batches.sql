CREATE TABLE "usage_batch_rejections" (
	"batch_id" text NOT NULL,
	"record_index" integer NOT NULL,
	"external_id" text,
	"code" text NOT NULL,
	"reason" text NOT NULL,
	"field" text,
	CONSTRAINT "usage_batch_rejections_batch_id_record_index_pk" PRIMARY KEY("batch_id","record_index")
);
--> statement-breakpoint
CREATE TABLE "usage_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"marketplace_id" text NOT NULL,
	"idempotency_key" text,
	"received_at" timestamp with time zone NOT NULL,
	"records" integer NOT NULL,
	"accepted" integer NOT NULL,
	"duplicate" integer NOT NULL,
	"rejected" integer NOT NULL,
	"totals" jsonb DEFAULT '[]'::jsonb NOT NULL,
	CONSTRAINT "usage_batches_counts" CHECK ("usage_batches"."accepted" >= 0 and "usage_batches"."duplicate" >= 0 and "usage_batches"."rejected" >= 0 and "usage_batches"."accepted" + "usage_batches"."duplicate" + "usage_batches"."rejected" = "usage_batches"."records")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "usage_batches_key_uq" ON "usage_batches" USING btree ("marketplace_id","idempotency_key");--> statement-breakpoint
CREATE INDEX "usage_batches_marketplace_idx" ON "usage_batches" USING btree ("marketplace_id","received_at","id");--> statement-breakpoint
CREATE INDEX "usage_batches_received_idx" ON "usage_batches" USING btree ("received_at","id");