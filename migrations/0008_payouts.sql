CREATE TABLE "chain_senders" (
	"chain_id" bigint NOT NULL,
	"address" text NOT NULL,
	"next_nonce" bigint NOT NULL,
	CONSTRAINT "chain_senders_chain_id_address_pk" PRIMARY KEY("chain_id","address")
);
--> statement-breakpoint
CREATE TABLE "chain_transactions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"chain_id" bigint NOT NULL,
	"asset_id" uuid NOT NULL,
	"sender" text NOT NULL,
	"status" text NOT NULL,
	"nonce" bigint,
	"to_address" text,
	"data" text,
	"value" numeric(78, 0),
	"gas_limit" numeric(78, 0),
	"tx_hash" text,
	"block_number" bigint,
	"block_hash" text,
	"gas_used" numeric(78, 0),
	"fee" numeric(78, 0),
	"gas_transfer_id" uuid,
	"failure_reason" text,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chain_transactions_nonce" UNIQUE("chain_id","sender","nonce"),
	CONSTRAINT "chain_transactions_status" CHECK ("chain_transactions"."status" in ('batched', 'signed', 'submitted', 'confirmed', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "chain_tx_attempts" (
	"hash" text PRIMARY KEY NOT NULL,
	"chain_tx_id" uuid NOT NULL,
	"attempt" integer NOT NULL,
	"raw" text NOT NULL,
	"max_fee_per_gas" numeric(78, 0) NOT NULL,
	"max_priority_fee_per_gas" numeric(78, 0) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"broadcast_at" timestamp with time zone,
	CONSTRAINT "chain_tx_attempts_attempt" UNIQUE("chain_tx_id","attempt")
);
--> statement-breakpoint
CREATE TABLE "payout_address_challenges" (
	"id" uuid PRIMARY KEY NOT NULL,
	"operator_id" text NOT NULL,
	"chain_id" bigint NOT NULL,
	"address" text NOT NULL,
	"message" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payout_address_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"operator_id" text NOT NULL,
	"chain_id" bigint NOT NULL,
	"old_address" text,
	"new_address" text NOT NULL,
	"challenge_id" uuid NOT NULL,
	"signature" text NOT NULL,
	"changed_by" text NOT NULL,
	"request_id" text,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payout_addresses" (
	"operator_id" text NOT NULL,
	"chain_id" bigint NOT NULL,
	"address" text NOT NULL,
	"challenge_id" uuid NOT NULL,
	"verified_at" timestamp with time zone NOT NULL,
	CONSTRAINT "payout_addresses_operator_id_chain_id_pk" PRIMARY KEY("operator_id","chain_id")
);
--> statement-breakpoint
CREATE TABLE "payout_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"payout_id" uuid NOT NULL,
	"status" text NOT NULL,
	"detail" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payout_policies" (
	"asset_id" uuid PRIMARY KEY NOT NULL,
	"min_amount" numeric(78, 0) NOT NULL,
	"schedule" text NOT NULL,
	"interval_seconds" integer,
	"max_gas_share_bps" integer,
	"updated_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payout_policies_schedule" CHECK ("payout_policies"."schedule" in ('manual', 'interval') and ("payout_policies"."schedule" = 'manual') = ("payout_policies"."interval_seconds" is null)),
	CONSTRAINT "payout_policies_min" CHECK ("payout_policies"."min_amount" >= 1)
);
--> statement-breakpoint
CREATE TABLE "payouts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"operator_id" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"settlement" text NOT NULL,
	"chain_id" bigint,
	"to_address" text,
	"amount" numeric(78, 0) NOT NULL,
	"status" text NOT NULL,
	"trigger" text NOT NULL,
	"requested_by" text NOT NULL,
	"hold_transfer_id" uuid NOT NULL,
	"settle_transfer_id" uuid,
	"chain_tx_id" uuid,
	"tx_hash" text,
	"block_number" bigint,
	"log_index" integer,
	"external_reference" text,
	"unpaid_attempts" integer DEFAULT 0 NOT NULL,
	"failure_reason" text,
	"note" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"confirmed_at" timestamp with time zone,
	CONSTRAINT "payouts_hold_transfer_id_unique" UNIQUE("hold_transfer_id"),
	CONSTRAINT "payouts_status" CHECK ("payouts"."status" in ('pending', 'batched', 'signed', 'submitted', 'confirmed', 'failed')),
	CONSTRAINT "payouts_settlement" CHECK ("payouts"."settlement" in ('evm', 'none') and ("payouts"."settlement" = 'evm') = ("payouts"."chain_id" is not null)),
	CONSTRAINT "payouts_amount" CHECK ("payouts"."amount" >= 1)
);
--> statement-breakpoint
ALTER TABLE "chain_transactions" ADD CONSTRAINT "chain_transactions_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chain_tx_attempts" ADD CONSTRAINT "chain_tx_attempts_chain_tx_id_chain_transactions_id_fk" FOREIGN KEY ("chain_tx_id") REFERENCES "public"."chain_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_address_challenges" ADD CONSTRAINT "payout_address_challenges_operator_id_operators_id_fk" FOREIGN KEY ("operator_id") REFERENCES "public"."operators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_addresses" ADD CONSTRAINT "payout_addresses_operator_id_operators_id_fk" FOREIGN KEY ("operator_id") REFERENCES "public"."operators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_addresses" ADD CONSTRAINT "payout_addresses_challenge_id_payout_address_challenges_id_fk" FOREIGN KEY ("challenge_id") REFERENCES "public"."payout_address_challenges"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_policies" ADD CONSTRAINT "payout_policies_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_operator_id_operators_id_fk" FOREIGN KEY ("operator_id") REFERENCES "public"."operators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_chain_tx_id_chain_transactions_id_fk" FOREIGN KEY ("chain_tx_id") REFERENCES "public"."chain_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "chain_transactions_open_idx" ON "chain_transactions" USING btree ("chain_id","status") WHERE "chain_transactions"."status" in ('batched', 'signed', 'submitted');--> statement-breakpoint
CREATE INDEX "payout_address_events_operator_idx" ON "payout_address_events" USING btree ("operator_id","chain_id","id");--> statement-breakpoint
CREATE INDEX "payout_events_payout_idx" ON "payout_events" USING btree ("payout_id","id");--> statement-breakpoint
CREATE INDEX "payouts_queue_idx" ON "payouts" USING btree ("chain_id","asset_id","created_at") WHERE "payouts"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "payouts_operator_idx" ON "payouts" USING btree ("operator_id","id");--> statement-breakpoint
CREATE INDEX "payouts_chain_tx_idx" ON "payouts" USING btree ("chain_tx_id");