-- A write made with an API key holds the key against revocation until its transaction ends, and
-- answers which of its keys are revoked already (src/db/queries/key-guard.ts). One call instead of
-- two statements: VOLATILE, so that its query after the locks reads a snapshot taken once they are
-- held, and sees a revocation that committed while they were awaited.
CREATE OR REPLACE FUNCTION hold_api_keys(ids uuid[]) RETURNS SETOF uuid LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('api-key:' || k::text, 0)) FROM unnest(ids) AS k ORDER BY k;
  RETURN QUERY SELECT a.id FROM api_keys a WHERE a.id = ANY (ids) AND a.revoked_at IS NOT NULL;
END $$;
