CREATE TABLE "customers" (
	"marketplace_id" text NOT NULL,
	"id" text NOT NULL,
	"billing" text NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "customers_marketplace_id_id_pk" PRIMARY KEY("marketplace_id","id"),
	CONSTRAINT "customers_billing" CHECK ("customers"."billing" in ('prepaid', 'postpaid'))
);
--> statement-breakpoint
CREATE TABLE "fee_schedules" (
	"marketplace_id" text NOT NULL,
	"version" integer NOT NULL,
	"effective_from" timestamp with time zone NOT NULL,
	"rules" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "fee_schedules_marketplace_id_version_pk" PRIMARY KEY("marketplace_id","version")
);
--> statement-breakpoint
CREATE TABLE "marketplace_operators" (
	"marketplace_id" text NOT NULL,
	"operator_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "marketplace_operators_marketplace_id_operator_id_pk" PRIMARY KEY("marketplace_id","operator_id")
);
--> statement-breakpoint
CREATE TABLE "marketplaces" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "operators" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_records" (
	"id" uuid PRIMARY KEY NOT NULL,
	"marketplace_id" text NOT NULL,
	"external_id" text NOT NULL,
	"request_hash" text NOT NULL,
	"operator_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"resource" text NOT NULL,
	"unit" text NOT NULL,
	"quantity" numeric NOT NULL,
	"unit_price" numeric,
	"asset_id" uuid NOT NULL,
	"gross" numeric(78, 0) NOT NULL,
	"net" numeric(78, 0) NOT NULL,
	"fees" jsonb NOT NULL,
	"fee_schedule_version" integer,
	"period_start" timestamp with time zone NOT NULL,
	"period_end" timestamp with time zone NOT NULL,
	"effective_at" timestamp with time zone NOT NULL,
	"hold_id" uuid,
	"transfer_id" uuid NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "usage_records_split" CHECK ("usage_records"."gross" > 0 and "usage_records"."net" >= 0 and "usage_records"."net" <= "usage_records"."gross"),
	CONSTRAINT "usage_records_period" CHECK ("usage_records"."period_start" <= "usage_records"."period_end")
);
--> statement-breakpoint
ALTER TABLE "customers" ADD CONSTRAINT "customers_marketplace_id_marketplaces_id_fk" FOREIGN KEY ("marketplace_id") REFERENCES "public"."marketplaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "fee_schedules" ADD CONSTRAINT "fee_schedules_marketplace_id_marketplaces_id_fk" FOREIGN KEY ("marketplace_id") REFERENCES "public"."marketplaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_operators" ADD CONSTRAINT "marketplace_operators_marketplace_id_marketplaces_id_fk" FOREIGN KEY ("marketplace_id") REFERENCES "public"."marketplaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketplace_operators" ADD CONSTRAINT "marketplace_operators_operator_id_operators_id_fk" FOREIGN KEY ("operator_id") REFERENCES "public"."operators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_records" ADD CONSTRAINT "usage_records_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_records" ADD CONSTRAINT "usage_records_transfer_id_transfers_id_fk" FOREIGN KEY ("transfer_id") REFERENCES "public"."transfers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "fee_schedules_effective_uq" ON "fee_schedules" USING btree ("marketplace_id","effective_from");--> statement-breakpoint
CREATE UNIQUE INDEX "usage_records_external_uq" ON "usage_records" USING btree ("marketplace_id","external_id");--> statement-breakpoint
CREATE INDEX "usage_records_operator_idx" ON "usage_records" USING btree ("operator_id","effective_at");--> statement-breakpoint
CREATE INDEX "usage_records_marketplace_idx" ON "usage_records" USING btree ("marketplace_id","effective_at");