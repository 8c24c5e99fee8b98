CREATE TABLE "holds" (
	"id" uuid PRIMARY KEY NOT NULL,
	"marketplace_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"escrow_account_id" uuid NOT NULL,
	"open_transfer_id" uuid NOT NULL,
	"status" text NOT NULL,
	"expires_at" timestamp with time zone,
	"closed_at" timestamp with time zone,
	"close_transfer_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "holds_status" CHECK ("holds"."status" in ('open', 'closed', 'expired'))
);
--> statement-breakpoint
ALTER TABLE "holds" ADD CONSTRAINT "holds_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "holds" ADD CONSTRAINT "holds_escrow_account_id_accounts_id_fk" FOREIGN KEY ("escrow_account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "holds" ADD CONSTRAINT "holds_open_transfer_id_transfers_id_fk" FOREIGN KEY ("open_transfer_id") REFERENCES "public"."transfers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "holds_expiry_idx" ON "holds" USING btree ("expires_at") WHERE "holds"."status" = 'open';--> statement-breakpoint
CREATE INDEX "holds_customer_idx" ON "holds" USING btree ("marketplace_id","customer_id");