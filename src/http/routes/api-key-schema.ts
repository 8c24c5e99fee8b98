import { z } from "@hono/zod-openapi";
import { isUuid } from "../../domain/ids.js";
import { Timestamp, Uuid } from "../schemas.js";

/**
 * Who did something, as the service records it: the id of an API key, `bootstrap-admin` for the
 * key from ADMIN_API_KEY, or (with `scheduler`) the payout worker's schedule.
 */
export function actorRef(options: { scheduler?: boolean } = {}) {
  const named = options.scheduler ? ["bootstrap-admin", "scheduler"] : ["bootstrap-admin"];
  return z
    .string()
    .refine((v) => isUuid(v.toLowerCase()) || named.includes(v), { error: `must be an API key's id or one of: ${named.join(", ")}` })
    .transform((v) => (isUuid(v.toLowerCase()) ? v.toLowerCase() : v))
    .openapi({
      example: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e",
      pattern: `^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|${named.join("|")})$`,
    });
}

export const ApiKey = z
  .object({
    id: Uuid,
    prefix: z.string(),
    name: z.string(),
    role: z.enum(["admin", "finance", "marketplace", "operator"]),
    scope_id: z.string().nullable(),
    created_at: Timestamp,
    revoked_at: Timestamp.nullable(),
    created_by: z.string().nullable().openapi({
      description:
        "the id of the key that created this one (`bootstrap-admin`: the key from ADMIN_API_KEY); null when not recorded. After revoking a key, `GET /v1/api-keys?created_by=` lists what it created",
    }),
  })
  .openapi("ApiKey");
