-- A chain's native token settles one asset. Refuse to go on, naming them, if a chain has several.
DO $$
DECLARE dup text;
BEGIN
  SELECT string_agg(chain_id::text || ': ' || codes, '; ') INTO dup
    FROM (SELECT chain_id, string_agg(code, ', ' ORDER BY code) AS codes FROM assets WHERE settlement = 'native' GROUP BY chain_id HAVING count(*) > 1) d;
  IF dup IS NOT NULL THEN
    RAISE EXCEPTION 'several assets settle as the same chain''s native token (%): keep one as native and give the others another settlement (in the database) before this migration', dup;
  END IF;
END $$;--> statement-breakpoint
CREATE UNIQUE INDEX "assets_chain_native_uq" ON "assets" USING btree ("chain_id") WHERE "assets"."settlement" = 'native';