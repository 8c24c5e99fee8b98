CREATE TABLE "operator_payout_limits" (
	"operator_id" text NOT NULL,
	"asset_id" uuid NOT NULL,
	"max_per_payout" numeric(78, 0),
	"max_per_day" numeric(78, 0),
	"proposal_id" uuid NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "operator_payout_limits_operator_id_asset_id_pk" PRIMARY KEY("operator_id","asset_id"),
	CONSTRAINT "operator_payout_limits_caps" CHECK (("operator_payout_limits"."max_per_payout" is null or "operator_payout_limits"."max_per_payout" >= 1) and ("operator_payout_limits"."max_per_day" is null or "operator_payout_limits"."max_per_day" >= 1))
);
--> statement-breakpoint
ALTER TABLE "account_balances" DROP CONSTRAINT "account_balances_non_negative";--> statement-breakpoint
ALTER TABLE "account_balances" ADD COLUMN "overdraft_limit" numeric(78, 0) DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "operator_payout_limits" ADD CONSTRAINT "operator_payout_limits_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_balances" ADD CONSTRAINT "account_balances_non_negative" CHECK ("account_balances"."debits_posted" >= 0 and "account_balances"."credits_posted" >= 0 and "account_balances"."debits_pending" >= 0 and "account_balances"."credits_pending" >= 0 and "account_balances"."overdraft_limit" >= 0);--> statement-breakpoint
-- A postpaid customer's account gets the no-overdraft limit with an allowance, its credit limit.
-- Customers opened before credit limits existed keep what they owe as their limit: their usage is
-- refused beyond it until a credit limit is approved (PUT /v1/customers/{id}/credit-limits/{asset}).
ALTER TABLE "accounts" DISABLE TRIGGER "accounts_fixed";
--> statement-breakpoint
UPDATE "accounts" SET "debits_must_not_exceed_credits" = true WHERE "code" = 'customer_postpaid' AND "opened_by_service";
--> statement-breakpoint
ALTER TABLE "accounts" ENABLE TRIGGER "accounts_fixed";
--> statement-breakpoint
UPDATE "account_balances" b SET "overdraft_limit" = greatest(b."debits_posted" + b."debits_pending" - b."credits_posted", 0)
  FROM "accounts" a WHERE a."id" = b."account_id" AND a."code" = 'customer_postpaid' AND a."opened_by_service";
