CREATE TABLE "capacity_policies" (
	"marketplace_id" text NOT NULL,
	"resource" text NOT NULL,
	"policy" text NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "capacity_policies_marketplace_id_resource_pk" PRIMARY KEY("marketplace_id","resource"),
	CONSTRAINT "capacity_policies_policy" CHECK ("capacity_policies"."policy" in ('refuse', 'flag'))
);
--> statement-breakpoint
CREATE TABLE "operator_capacity" (
	"operator_id" text NOT NULL,
	"resource" text NOT NULL,
	"version" integer NOT NULL,
	"units" integer NOT NULL,
	"effective_from" timestamp with time zone NOT NULL,
	"until" timestamp with time zone,
	"declared_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "operator_capacity_operator_id_resource_version_pk" PRIMARY KEY("operator_id","resource","version"),
	CONSTRAINT "operator_capacity_units" CHECK ("operator_capacity"."units" >= 0),
	CONSTRAINT "operator_capacity_until" CHECK ("operator_capacity"."until" is null or "operator_capacity"."until" > "operator_capacity"."effective_from")
);
--> statement-breakpoint
CREATE TABLE "operator_costs" (
	"operator_id" text NOT NULL,
	"resource" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"power_watts" numeric NOT NULL,
	"price_per_kwh" numeric NOT NULL,
	"bandwidth_monthly" numeric NOT NULL,
	"other_monthly" numeric NOT NULL,
	"purchase_price" numeric NOT NULL,
	"depreciation_months" integer NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "operator_costs_operator_id_resource_pk" PRIMARY KEY("operator_id","resource"),
	CONSTRAINT "operator_costs_depreciation" CHECK ("operator_costs"."depreciation_months" between 1 and 600)
);
--> statement-breakpoint
CREATE TABLE "usage_capacity_flags" (
	"usage_id" uuid PRIMARY KEY NOT NULL,
	"marketplace_id" text NOT NULL,
	"operator_id" text NOT NULL,
	"resource" text NOT NULL,
	"capacity_unit_ms" numeric(78, 0) NOT NULL,
	"used_unit_ms" numeric(78, 0) NOT NULL,
	"claimed_unit_ms" numeric(78, 0) NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "capacity_policies" ADD CONSTRAINT "capacity_policies_marketplace_id_marketplaces_id_fk" FOREIGN KEY ("marketplace_id") REFERENCES "public"."marketplaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "operator_capacity" ADD CONSTRAINT "operator_capacity_operator_id_operators_id_fk" FOREIGN KEY ("operator_id") REFERENCES "public"."operators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "operator_costs" ADD CONSTRAINT "operator_costs_operator_id_operators_id_fk" FOREIGN KEY ("operator_id") REFERENCES "public"."operators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "operator_costs" ADD CONSTRAINT "operator_costs_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "operator_capacity_effective_uq" ON "operator_capacity" USING btree ("operator_id","resource","effective_from");--> statement-breakpoint
CREATE INDEX "usage_capacity_flags_marketplace_idx" ON "usage_capacity_flags" USING btree ("marketplace_id","created_at");--> statement-breakpoint
CREATE INDEX "usage_records_capacity_idx" ON "usage_records" USING btree ("operator_id","resource","period_end");--> statement-breakpoint
-- Capacity versions are history, like fee schedules: a change is a new version. Flags are kept with the records they flag.
CREATE TRIGGER operator_capacity_append_only BEFORE UPDATE OR DELETE ON operator_capacity
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER usage_capacity_flags_append_only BEFORE UPDATE OR DELETE ON usage_capacity_flags
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
