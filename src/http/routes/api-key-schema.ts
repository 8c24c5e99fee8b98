import { z } from "@hono/zod-openapi";
import { Timestamp, Uuid } from "../schemas.js";

export const ApiKey = z
  .object({
    id: Uuid,
    prefix: z.string(),
    name: z.string(),
    role: z.enum(["admin", "finance", "marketplace", "operator"]),
    scope_id: z.string().nullable(),
    created_at: Timestamp,
    revoked_at: Timestamp.nullable(),
  })
  .openapi("ApiKey");
