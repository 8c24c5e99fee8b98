CREATE TABLE "asset_settlements" (
	"asset_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"settlement" text NOT NULL,
	"chain_id" bigint,
	"token_address" text,
	"valid_from" timestamp with time zone NOT NULL,
	"proposal_id" uuid,
	"proposed_by" text,
	"approved_by" text,
	CONSTRAINT "asset_settlements_asset_id_version_pk" PRIMARY KEY("asset_id","version"),
	CONSTRAINT "asset_settlements_version" CHECK ("asset_settlements"."version" >= 1),
	CONSTRAINT "asset_settlements_shape" CHECK (("asset_settlements"."settlement" = 'erc20' and "asset_settlements"."chain_id" is not null and "asset_settlements"."token_address" is not null)
       or ("asset_settlements"."settlement" = 'native' and "asset_settlements"."chain_id" is not null and "asset_settlements"."token_address" is null)
       or ("asset_settlements"."settlement" = 'offchain' and "asset_settlements"."chain_id" is null and "asset_settlements"."token_address" is null)),
	CONSTRAINT "asset_settlements_approval" CHECK (("asset_settlements"."version" = 1) = ("asset_settlements"."proposal_id" is null))
);
--> statement-breakpoint
ALTER TABLE "assets" ADD COLUMN "retired_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "customers" ADD COLUMN "retired_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "asset_settlements" ADD CONSTRAINT "asset_settlements_asset_id_assets_id_fk" FOREIGN KEY ("asset_id") REFERENCES "public"."assets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Each asset's settlement as registered is its first version, in force since its registration.
INSERT INTO "asset_settlements" ("asset_id", "version", "settlement", "chain_id", "token_address", "valid_from")
SELECT "id", 1, "settlement", "chain_id", "token_address", "created_at" FROM "assets";
--> statement-breakpoint
-- The settlement history is never edited: a change is a new version.
CREATE TRIGGER asset_settlements_append_only BEFORE UPDATE OR DELETE ON asset_settlements
  FOR EACH ROW EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
CREATE TRIGGER asset_settlements_no_truncate BEFORE TRUNCATE ON asset_settlements
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
--> statement-breakpoint
-- An asset's identity and scale are fixed (every amount recorded in it depends on them), and a
-- retirement is final: only how it settles may change, and retired_at be set once.
CREATE FUNCTION ledger_assets_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'assets cannot be deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF (NEW.id, NEW.code, NEW.scale, NEW.created_at) IS DISTINCT FROM (OLD.id, OLD.code, OLD.scale, OLD.created_at)
     OR (OLD.retired_at IS NOT NULL AND NEW.retired_at IS DISTINCT FROM OLD.retired_at) THEN
    RAISE EXCEPTION 'only how an asset settles may change, and its retirement is final' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER assets_fixed BEFORE UPDATE OR DELETE ON assets
  FOR EACH ROW EXECUTE FUNCTION ledger_assets_fixed();
