ALTER TABLE "payout_policies" ADD COLUMN "approval_threshold" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "payouts" ADD COLUMN "approval" text;--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_approval" CHECK ("payouts"."approval" is null or "payouts"."approval" in ('required', 'approved'));