CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"key_id" text,
	"role" text,
	"scope_id" text,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"route" text,
	"status" integer NOT NULL,
	"request_id" text NOT NULL,
	"idempotency_key" text,
	"body_sha256" text,
	"body_bytes" integer
);
--> statement-breakpoint
CREATE TABLE "chain_cursors" (
	"chain_id" bigint NOT NULL,
	"asset_id" uuid NOT NULL,
	"next_block" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chain_cursors_chain_id_asset_id_pk" PRIMARY KEY("chain_id","asset_id")
);
--> statement-breakpoint
CREATE TABLE "chain_deposits" (
	"chain_id" bigint NOT NULL,
	"tx_hash" text NOT NULL,
	"log_index" integer NOT NULL,
	"asset_id" uuid NOT NULL,
	"from_address" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"block_number" bigint NOT NULL,
	"marketplace_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"transfer_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chain_deposits_chain_id_tx_hash_log_index_pk" PRIMARY KEY("chain_id","tx_hash","log_index")
);
--> statement-breakpoint
CREATE TABLE "deposit_addresses" (
	"chain_id" bigint NOT NULL,
	"address" text NOT NULL,
	"marketplace_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "deposit_addresses_chain_id_address_pk" PRIMARY KEY("chain_id","address")
);
--> statement-breakpoint
CREATE TABLE "reconciliation_items" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"reconciliation_id" uuid NOT NULL,
	"status" text NOT NULL,
	"direction" text NOT NULL,
	"payout_id" uuid,
	"tx_hash" text,
	"log_index" integer,
	"block_number" bigint,
	"ledger_amount" numeric(78, 0),
	"chain_amount" numeric(78, 0),
	"ledger_address" text,
	"chain_address" text,
	"detail" text,
	"resolved_at" timestamp with time zone,
	"resolved_by" text,
	"resolution_note" text,
	"adjustment_transfer_id" uuid,
	CONSTRAINT "reconciliation_items_status" CHECK ("reconciliation_items"."status" in ('matched', 'missing_on_chain', 'unexpected_on_chain', 'amount_mismatch', 'recipient_mismatch')),
	CONSTRAINT "reconciliation_items_direction" CHECK ("reconciliation_items"."direction" in ('in', 'out'))
);
--> statement-breakpoint
CREATE TABLE "reconciliations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"chain_id" bigint NOT NULL,
	"asset_id" uuid NOT NULL,
	"from_block" bigint NOT NULL,
	"to_block" bigint NOT NULL,
	"summary" jsonb NOT NULL,
	"requested_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "chain_deposits" ADD CONSTRAINT "chain_deposits_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reconciliation_items" ADD CONSTRAINT "reconciliation_items_reconciliation_id_reconciliations_id_fk" FOREIGN KEY ("reconciliation_id") REFERENCES "public"."reconciliations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reconciliations" ADD CONSTRAINT "reconciliations_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_key_idx" ON "audit_log" USING btree ("key_id","id");--> statement-breakpoint
CREATE INDEX "deposit_addresses_customer_idx" ON "deposit_addresses" USING btree ("marketplace_id","customer_id");--> statement-breakpoint
CREATE INDEX "reconciliation_items_run_idx" ON "reconciliation_items" USING btree ("reconciliation_id","status","id");