CREATE TABLE "receipt_rechecks" (
	"proposal_id" uuid NOT NULL,
	"chain_id" bigint NOT NULL,
	"checked_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "receipt_rechecks_proposal_id_chain_id_pk" PRIMARY KEY("proposal_id","chain_id")
);
