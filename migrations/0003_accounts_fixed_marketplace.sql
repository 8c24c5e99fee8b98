-- Custom SQL migration file, put your code below! ---- The marketplace an account belongs to is part of its fixed identity, like its asset and flags.
CREATE OR REPLACE FUNCTION ledger_accounts_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'accounts cannot be deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF (NEW.id, NEW.asset_id, NEW.ref, NEW.code, NEW.marketplace_id, NEW.owner_type, NEW.owner_id, NEW.normal_side,
      NEW.debits_must_not_exceed_credits, NEW.credits_must_not_exceed_debits, NEW.created_at)
     IS DISTINCT FROM
     (OLD.id, OLD.asset_id, OLD.ref, OLD.code, OLD.marketplace_id, OLD.owner_type, OLD.owner_id, OLD.normal_side,
      OLD.debits_must_not_exceed_credits, OLD.credits_must_not_exceed_debits, OLD.created_at) THEN
    RAISE EXCEPTION 'only the metadata of an account may change' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
-- A ref names one account per asset and marketplace (global accounts have no marketplace).
CREATE UNIQUE INDEX accounts_asset_ref_uq ON accounts (asset_id, coalesce(marketplace_id, ''), ref) WHERE ref IS NOT NULL;
