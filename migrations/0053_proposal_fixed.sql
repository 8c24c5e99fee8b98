-- Custom SQL migration file, put your code below! --
-- An approval is of what the approver was shown: a proposal's id names what it asks, so what it
-- asks (kind, marketplace, payload) and who asked it (proposed_by, proposed_at) never change, and
-- a decision, once made, stays as it was made (status, decider, instant, reason, result). A
-- proposal is never deleted: rejecting it is how it ends.
CREATE FUNCTION proposals_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'proposals cannot be deleted' USING ERRCODE = 'insufficient_privilege', HINT = 'reject the proposal';
  END IF;
  IF (NEW.id, NEW.kind, NEW.marketplace_id, NEW.payload, NEW.proposed_by, NEW.proposed_at)
     IS DISTINCT FROM
     (OLD.id, OLD.kind, OLD.marketplace_id, OLD.payload, OLD.proposed_by, OLD.proposed_at) THEN
    RAISE EXCEPTION 'what a proposal asks (kind, marketplace, payload) and who proposed it cannot change'
      USING ERRCODE = 'insufficient_privilege', HINT = 'reject the proposal and propose again';
  END IF;
  IF OLD.status <> 'proposed'
     AND (NEW.status, NEW.decided_by, NEW.decided_at, NEW.reason, NEW.result)
         IS DISTINCT FROM
         (OLD.status, OLD.decided_by, OLD.decided_at, OLD.reason, OLD.result) THEN
    RAISE EXCEPTION 'a decided proposal cannot change: it was % by %', OLD.status, OLD.decided_by
      USING ERRCODE = 'insufficient_privilege', HINT = 'propose again';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER proposals_fixed BEFORE UPDATE OR DELETE ON proposals
  FOR EACH ROW EXECUTE FUNCTION proposals_fixed();
--> statement-breakpoint
CREATE TRIGGER proposals_no_truncate BEFORE TRUNCATE ON proposals
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_mutation();
