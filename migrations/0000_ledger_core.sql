CREATE TABLE "account_balances" (
	"account_id" uuid PRIMARY KEY NOT NULL,
	"debits_posted" numeric(78, 0) DEFAULT '0' NOT NULL,
	"credits_posted" numeric(78, 0) DEFAULT '0' NOT NULL,
	"debits_pending" numeric(78, 0) DEFAULT '0' NOT NULL,
	"credits_pending" numeric(78, 0) DEFAULT '0' NOT NULL,
	CONSTRAINT "account_balances_non_negative" CHECK ("account_balances"."debits_posted" >= 0 and "account_balances"."credits_posted" >= 0 and "account_balances"."debits_pending" >= 0 and "account_balances"."credits_pending" >= 0)
);
--> statement-breakpoint
CREATE TABLE "accounts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"asset_id" uuid NOT NULL,
	"ref" text,
	"code" text NOT NULL,
	"owner_type" text,
	"owner_id" text,
	"normal_side" text NOT NULL,
	"debits_must_not_exceed_credits" boolean DEFAULT false NOT NULL,
	"credits_must_not_exceed_debits" boolean DEFAULT false NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "accounts_normal_side" CHECK ("accounts"."normal_side" in ('debit', 'credit')),
	CONSTRAINT "accounts_one_limit" CHECK (not ("accounts"."debits_must_not_exceed_credits" and "accounts"."credits_must_not_exceed_debits"))
);
--> statement-breakpoint
CREATE TABLE "assets" (
	"id" uuid PRIMARY KEY NOT NULL,
	"code" text NOT NULL,
	"scale" integer NOT NULL,
	"settlement" text NOT NULL,
	"chain_id" bigint,
	"token_address" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "assets_code_unique" UNIQUE("code"),
	CONSTRAINT "assets_scale_range" CHECK ("assets"."scale" between 0 and 77),
	CONSTRAINT "assets_settlement_kind" CHECK ("assets"."settlement" in ('erc20', 'native', 'offchain')),
	CONSTRAINT "assets_settlement_shape" CHECK (("assets"."settlement" = 'erc20' and "assets"."chain_id" is not null and "assets"."token_address" is not null)
       or ("assets"."settlement" = 'native' and "assets"."chain_id" is not null and "assets"."token_address" is null)
       or ("assets"."settlement" = 'offchain' and "assets"."chain_id" is null and "assets"."token_address" is null))
);
--> statement-breakpoint
CREATE TABLE "entries" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "entries_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"transfer_id" uuid NOT NULL,
	"leg" integer NOT NULL,
	"account_id" uuid NOT NULL,
	"asset_id" uuid NOT NULL,
	"side" text NOT NULL,
	"posted_amount" numeric(78, 0) NOT NULL,
	"pending_amount" numeric(78, 0) NOT NULL,
	"balance_after" numeric(78, 0) NOT NULL,
	"effective_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "entries_side" CHECK ("entries"."side" in ('debit', 'credit')),
	CONSTRAINT "entries_posted_non_negative" CHECK ("entries"."posted_amount" >= 0),
	CONSTRAINT "entries_moves_something" CHECK ("entries"."posted_amount" <> 0 or "entries"."pending_amount" <> 0)
);
--> statement-breakpoint
CREATE TABLE "journal_seals" (
	"id" bigint PRIMARY KEY NOT NULL,
	"from_txid" bigint NOT NULL,
	"to_txid" bigint NOT NULL,
	"transfer_count" integer NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "transfers" (
	"id" uuid PRIMARY KEY NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "transfers_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"idempotency_key" text NOT NULL,
	"request_hash" text NOT NULL,
	"kind" text NOT NULL,
	"pending_id" uuid,
	"reverses_id" uuid,
	"timeout_at" timestamp with time zone,
	"effective_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"txid" bigint DEFAULT (pg_current_xact_id()::text)::bigint NOT NULL,
	CONSTRAINT "transfers_kind" CHECK ("transfers"."kind" in ('standard', 'pending', 'post_pending', 'void_pending', 'expire_pending', 'reversal')),
	CONSTRAINT "transfers_refs" CHECK (("transfers"."pending_id" is not null) = ("transfers"."kind" in ('post_pending', 'void_pending', 'expire_pending'))
      and ("transfers"."reverses_id" is not null) = ("transfers"."kind" = 'reversal')
      and ("transfers"."timeout_at" is null or "transfers"."kind" = 'pending'))
);
--> statement-breakpoint
ALTER TABLE "account_balances" ADD CONSTRAINT "account_balances_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "entries" ADD CONSTRAINT "entries_transfer_id_transfers_id_fk" FOREIGN KEY ("transfer_id") REFERENCES "public"."transfers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "entries" ADD CONSTRAINT "entries_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "entries" ADD CONSTRAINT "entries_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_asset_ref_uq" ON "accounts" USING btree ("asset_id","ref");--> statement-breakpoint
CREATE INDEX "accounts_owner_idx" ON "accounts" USING btree ("owner_type","owner_id");--> statement-breakpoint
CREATE UNIQUE INDEX "assets_chain_token_uq" ON "assets" USING btree ("chain_id","token_address");--> statement-breakpoint
CREATE INDEX "entries_account_id_idx" ON "entries" USING btree ("account_id","id");--> statement-breakpoint
CREATE INDEX "entries_account_effective_idx" ON "entries" USING btree ("account_id","effective_at");--> statement-breakpoint
CREATE INDEX "entries_transfer_idx" ON "entries" USING btree ("transfer_id");--> statement-breakpoint
CREATE UNIQUE INDEX "transfers_idempotency_key_uq" ON "transfers" USING btree ("idempotency_key");--> statement-breakpoint
CREATE UNIQUE INDEX "transfers_seq_uq" ON "transfers" USING btree ("seq");--> statement-breakpoint
CREATE UNIQUE INDEX "transfers_pending_resolution_uq" ON "transfers" USING btree ("pending_id") WHERE "transfers"."pending_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "transfers_reversal_uq" ON "transfers" USING btree ("reverses_id") WHERE "transfers"."reverses_id" is not null;--> statement-breakpoint
CREATE INDEX "transfers_open_pending_idx" ON "transfers" USING btree ("timeout_at") WHERE "transfers"."kind" = 'pending' and "transfers"."timeout_at" is not null;--> statement-breakpoint
CREATE INDEX "transfers_txid_idx" ON "transfers" USING btree ("txid");