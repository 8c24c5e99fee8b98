CREATE TABLE "deployment" (
	"singleton" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "deployment_singleton" CHECK ("deployment"."singleton")
);
