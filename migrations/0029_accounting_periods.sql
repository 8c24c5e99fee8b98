CREATE TABLE "accounting_periods" (
	"marketplace_id" text NOT NULL,
	"period" text NOT NULL,
	"starts_at" timestamp with time zone NOT NULL,
	"ends_at" timestamp with time zone NOT NULL,
	"status" text NOT NULL,
	"changed_by" text NOT NULL,
	"changed_at" timestamp with time zone NOT NULL,
	"proposal_id" uuid,
	CONSTRAINT "accounting_periods_marketplace_id_period_pk" PRIMARY KEY("marketplace_id","period"),
	CONSTRAINT "accounting_periods_status" CHECK ("accounting_periods"."status" in ('open', 'closing', 'closed')),
	CONSTRAINT "accounting_periods_bounds" CHECK ("accounting_periods"."starts_at" < "accounting_periods"."ends_at")
);
--> statement-breakpoint
ALTER TABLE "marketplaces" ADD COLUMN "time_zone" text DEFAULT 'UTC' NOT NULL;--> statement-breakpoint
ALTER TABLE "accounting_periods" ADD CONSTRAINT "accounting_periods_marketplace_id_marketplaces_id_fk" FOREIGN KEY ("marketplace_id") REFERENCES "public"."marketplaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "accounting_periods_window_idx" ON "accounting_periods" USING btree ("marketplace_id","starts_at");