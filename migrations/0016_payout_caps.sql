ALTER TABLE "payout_policies" ADD COLUMN "max_per_payout" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "payout_policies" ADD COLUMN "max_per_day" numeric(78, 0);