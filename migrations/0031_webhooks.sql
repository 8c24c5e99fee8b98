CREATE TABLE "webhook_deliveries" (
	"id" uuid PRIMARY KEY NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"event_position" bigint NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"attempt" integer NOT NULL,
	"manual" boolean DEFAULT false NOT NULL,
	"status" text NOT NULL,
	"status_code" integer,
	"latency_ms" integer,
	"error" text,
	"requested_by" text,
	"created_at" timestamp with time zone NOT NULL,
	"attempted_at" timestamp with time zone,
	CONSTRAINT "webhook_deliveries_status" CHECK ("webhook_deliveries"."status" in ('pending', 'succeeded', 'failed')),
	CONSTRAINT "webhook_deliveries_attempted" CHECK (("webhook_deliveries"."status" = 'pending') = ("webhook_deliveries"."attempted_at" is null))
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" uuid PRIMARY KEY NOT NULL,
	"marketplace_id" text,
	"operator_id" text,
	"url" text NOT NULL,
	"description" text,
	"event_types" text[] NOT NULL,
	"status" text NOT NULL,
	"disabled_reason" text,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_until" timestamp with time zone,
	"cursor" bigint NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"failing_since" timestamp with time zone,
	"next_attempt_at" timestamp with time zone,
	"lease_token" uuid,
	"lease_until" timestamp with time zone,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "webhook_endpoints_status" CHECK ("webhook_endpoints"."status" in ('enabled', 'disabled', 'deleted')),
	CONSTRAINT "webhook_endpoints_tenant" CHECK ("webhook_endpoints"."marketplace_id" is null or "webhook_endpoints"."operator_id" is null),
	CONSTRAINT "webhook_endpoints_disabled" CHECK (("webhook_endpoints"."status" = 'disabled') = ("webhook_endpoints"."disabled_reason" is not null))
);
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_marketplace_id_marketplaces_id_fk" FOREIGN KEY ("marketplace_id") REFERENCES "public"."marketplaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_operator_id_operators_id_fk" FOREIGN KEY ("operator_id") REFERENCES "public"."operators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id","created_at","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries" USING btree ("endpoint_id","created_at") WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_endpoints_marketplace_idx" ON "webhook_endpoints" USING btree ("marketplace_id","id");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_operator_idx" ON "webhook_endpoints" USING btree ("operator_id","id");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_due_idx" ON "webhook_endpoints" USING btree ("next_attempt_at") WHERE "webhook_endpoints"."status" = 'enabled';