CREATE TABLE "operator_invitations" (
	"marketplace_id" text NOT NULL,
	"operator_id" text NOT NULL,
	"invited_by" text NOT NULL,
	"invited_at" timestamp with time zone NOT NULL,
	"accepted_by" text,
	"accepted_at" timestamp with time zone,
	CONSTRAINT "operator_invitations_marketplace_id_operator_id_pk" PRIMARY KEY("marketplace_id","operator_id")
);
--> statement-breakpoint
ALTER TABLE "operator_invitations" ADD CONSTRAINT "operator_invitations_marketplace_id_marketplaces_id_fk" FOREIGN KEY ("marketplace_id") REFERENCES "public"."marketplaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "operator_invitations" ADD CONSTRAINT "operator_invitations_operator_id_operators_id_fk" FOREIGN KEY ("operator_id") REFERENCES "public"."operators"("id") ON DELETE no action ON UPDATE no action;