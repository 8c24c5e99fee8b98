CREATE INDEX IF NOT EXISTS "payouts_requested_by_idx" ON "payouts" USING btree ("requested_by","id");
