import { z } from "@hono/zod-openapi";
import { Metadata } from "../schemas.js";

/** What describes a marketplace or an operator and may change (PATCH): nothing money depends on. */
export const PartyUpdate = z
  .strictObject({
    name: z.string().min(1).max(200).optional().openapi({ example: "GPU Market (EU)" }),
    metadata: Metadata.optional().openapi({ description: "replaces the metadata as a whole (send the fields to keep too)" }),
  })
  .refine((b) => b.name !== undefined || b.metadata !== undefined, { message: "give at least one of name and metadata: an empty change changes nothing" })
  .openapi("PartyUpdate");

/** What describes a customer and may change (PATCH): its metadata. Its billing decides its accounts and is fixed. */
export const CustomerUpdate = z
  .strictObject({ metadata: Metadata.openapi({ description: "replaces the metadata as a whole (send the fields to keep too)" }) })
  .openapi("CustomerUpdate");
