-- The ledger's deployment id (payout ids are derived from it) made with the schema, not by the first
-- payout request: a request refused before it writes leaves no row behind.
INSERT INTO deployment (singleton, id) VALUES (true, gen_random_uuid()) ON CONFLICT DO NOTHING;
