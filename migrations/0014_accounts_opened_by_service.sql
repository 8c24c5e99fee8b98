ALTER TABLE "accounts" ADD COLUMN "opened_by_service" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
-- Accounts of the chart that the service opened before this flag existed, recognised by their shape
-- (ref, code and whether they belong to a marketplace). An account a tenant opened through the API
-- with the same shape cannot be told apart and is taken as the service's.
UPDATE "accounts" SET "opened_by_service" = true
 WHERE ("marketplace_id" IS NOT NULL AND "ref" LIKE 'customer:%' AND "code" IN ('customer_prepaid', 'customer_postpaid') AND "owner_type" = 'customer')
    OR ("marketplace_id" IS NOT NULL AND "ref" LIKE 'hold:%' AND "code" = 'customer_hold')
    OR ("marketplace_id" IS NOT NULL AND "ref" = 'deposits:clearing' AND "code" = 'deposit_clearing')
    OR ("marketplace_id" IS NOT NULL AND "ref" LIKE '%:fees' AND "ref" <> 'protocol:fees' AND "code" = split_part("ref", ':', 1) || '_fees')
    OR ("marketplace_id" IS NULL AND "ref" = 'protocol:fees' AND "code" = 'protocol_fees')
    OR ("marketplace_id" IS NULL AND "ref" LIKE 'operator:%:payable' AND "code" = 'operator_payable')
    OR ("marketplace_id" IS NULL AND "ref" LIKE 'payouts:in_transit:%' AND "code" = 'payouts_in_transit')
    OR ("marketplace_id" IS NULL AND "ref" LIKE 'treasury:%' AND "code" = 'treasury')
    OR ("marketplace_id" IS NULL AND "ref" LIKE 'expense:gas:%' AND "code" = 'gas_expense');
