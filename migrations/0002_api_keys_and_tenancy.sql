CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY NOT NULL,
	"prefix" text NOT NULL,
	"secret_hash" text NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"scope_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_role" CHECK ("api_keys"."role" in ('admin', 'finance', 'marketplace', 'operator')),
	CONSTRAINT "api_keys_scope" CHECK (("api_keys"."scope_id" is not null) = ("api_keys"."role" in ('marketplace', 'operator')))
);
--> statement-breakpoint
CREATE TABLE "http_idempotency" (
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"request_hash" text NOT NULL,
	"status" integer NOT NULL,
	"body" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "http_idempotency_scope_key_pk" PRIMARY KEY("scope","key")
);
--> statement-breakpoint
DROP INDEX "accounts_asset_ref_uq";--> statement-breakpoint
ALTER TABLE "accounts" ADD COLUMN "marketplace_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_prefix_uq" ON "api_keys" USING btree ("prefix");--> statement-breakpoint
CREATE INDEX "api_keys_scope_idx" ON "api_keys" USING btree ("role","scope_id");--> statement-breakpoint
CREATE INDEX "accounts_marketplace_idx" ON "accounts" USING btree ("marketplace_id");