CREATE TABLE "usage_limits" (
	"marketplace_id" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"max_gross_per_record" numeric(78, 0),
	"max_quantity_per_second" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "usage_limits_marketplace_id_asset_id_pk" PRIMARY KEY("marketplace_id","asset_id"),
	CONSTRAINT "usage_limits_gross" CHECK ("usage_limits"."max_gross_per_record" is null or "usage_limits"."max_gross_per_record" >= 1)
);
--> statement-breakpoint
ALTER TABLE "usage_limits" ADD CONSTRAINT "usage_limits_marketplace_id_marketplaces_id_fk" FOREIGN KEY ("marketplace_id") REFERENCES "public"."marketplaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_limits" ADD CONSTRAINT "usage_limits_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;