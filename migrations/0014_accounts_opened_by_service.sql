ALTER TABLE "accounts" ADD COLUMN "opened_by_service" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
-- Accounts of the chart that the service opened before this flag existed, recognised by their whole
-- shape (ref, code, owner, normal side and limit flags exactly as the service opens them).
UPDATE "accounts" SET "opened_by_service" = true
 WHERE "credits_must_not_exceed_debits" = false AND (
       ("marketplace_id" IS NOT NULL AND "ref" = 'customer:' || "owner_id" AND "owner_type" = 'customer' AND "normal_side" = 'credit'
        AND (("code" = 'customer_prepaid' AND "debits_must_not_exceed_credits") OR ("code" = 'customer_postpaid' AND NOT "debits_must_not_exceed_credits")))
    OR ("marketplace_id" IS NOT NULL AND "ref" LIKE 'hold:%' AND "code" = 'customer_hold' AND "owner_type" = 'customer' AND "normal_side" = 'credit' AND "debits_must_not_exceed_credits")
    OR ("marketplace_id" IS NOT NULL AND "ref" = 'deposits:clearing' AND "code" = 'deposit_clearing' AND "owner_type" = 'marketplace' AND "owner_id" = "marketplace_id"
        AND "normal_side" = 'debit' AND NOT "debits_must_not_exceed_credits")
    OR ("marketplace_id" IS NOT NULL AND "ref" = 'marketplace:fees' AND "code" = 'marketplace_fees' AND "owner_type" = 'marketplace' AND "owner_id" = "marketplace_id"
        AND "normal_side" = 'credit' AND NOT "debits_must_not_exceed_credits")
    OR ("marketplace_id" IS NOT NULL AND "ref" = "owner_id" || ':fees' AND "code" = "owner_id" || '_fees' AND "owner_type" = 'fee_party'
        AND "normal_side" = 'credit' AND NOT "debits_must_not_exceed_credits")
    OR ("marketplace_id" IS NULL AND "ref" = 'protocol:fees' AND "code" = 'protocol_fees' AND "owner_type" = 'platform' AND "owner_id" = 'protocol'
        AND "normal_side" = 'credit' AND NOT "debits_must_not_exceed_credits")
    OR ("marketplace_id" IS NULL AND "ref" = 'operator:' || "owner_id" || ':payable' AND "code" = 'operator_payable' AND "owner_type" = 'operator'
        AND "normal_side" = 'credit' AND "debits_must_not_exceed_credits")
    OR ("marketplace_id" IS NULL AND "ref" LIKE 'payouts:in\_transit:%' AND "code" = 'payouts_in_transit' AND "owner_type" = 'platform' AND "owner_id" = 'treasury'
        AND "normal_side" = 'credit' AND NOT "debits_must_not_exceed_credits")
    OR ("marketplace_id" IS NULL AND "ref" LIKE 'treasury:%' AND "code" = 'treasury' AND "owner_type" = 'platform' AND "owner_id" = 'treasury'
        AND "normal_side" = 'debit' AND NOT "debits_must_not_exceed_credits")
    OR ("marketplace_id" IS NULL AND "ref" LIKE 'expense:gas:%' AND "code" = 'gas_expense' AND "owner_type" = 'platform' AND "owner_id" = 'treasury'
        AND "normal_side" = 'debit' AND NOT "debits_must_not_exceed_credits"));
--> statement-breakpoint
-- Any other account that carries one of the service's refs was opened by hand: it keeps its balance
-- and history under 'legacy:' || ref, and the service opens its own account on first use.
ALTER TABLE "accounts" DISABLE TRIGGER "accounts_fixed";
--> statement-breakpoint
UPDATE "accounts" SET "ref" = 'legacy:' || "ref"
 WHERE NOT "opened_by_service" AND (
       "ref" LIKE 'customer:%' OR "ref" LIKE 'operator:%' OR "ref" LIKE 'hold:%' OR "ref" LIKE 'deposits:%' OR "ref" LIKE 'payouts:%'
    OR "ref" LIKE 'treasury:%' OR "ref" LIKE 'expense:%' OR "ref" LIKE 'protocol:%' OR "ref" LIKE '%:fees');
--> statement-breakpoint
ALTER TABLE "accounts" ENABLE TRIGGER "accounts_fixed";
--> statement-breakpoint
-- Whether an account is the service's is part of its fixed identity.
CREATE OR REPLACE FUNCTION ledger_accounts_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'accounts cannot be deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF (NEW.id, NEW.asset_id, NEW.ref, NEW.code, NEW.marketplace_id, NEW.owner_type, NEW.owner_id, NEW.normal_side,
      NEW.debits_must_not_exceed_credits, NEW.credits_must_not_exceed_debits, NEW.opened_by_service, NEW.created_at)
     IS DISTINCT FROM
     (OLD.id, OLD.asset_id, OLD.ref, OLD.code, OLD.marketplace_id, OLD.owner_type, OLD.owner_id, OLD.normal_side,
      OLD.debits_must_not_exceed_credits, OLD.credits_must_not_exceed_debits, OLD.opened_by_service, OLD.created_at) THEN
    RAISE EXCEPTION 'only the metadata of an account may change' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
