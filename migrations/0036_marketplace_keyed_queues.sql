-- The usage queues are keyed within their marketplace, as their records are (docs/scaling.md,
-- "Beyond one primary"): a key that leads with the distribution column can be enforced per shard.
ALTER TABLE "rate_lock_queue" DROP CONSTRAINT "rate_lock_queue_pkey";--> statement-breakpoint
ALTER TABLE "usage_capacity_flags" DROP CONSTRAINT "usage_capacity_flags_pkey";--> statement-breakpoint
ALTER TABLE "rate_lock_queue" ADD CONSTRAINT "rate_lock_queue_marketplace_id_usage_id_pk" PRIMARY KEY("marketplace_id","usage_id");--> statement-breakpoint
ALTER TABLE "usage_capacity_flags" ADD CONSTRAINT "usage_capacity_flags_marketplace_id_usage_id_pk" PRIMARY KEY("marketplace_id","usage_id");
