import { z } from "@hono/zod-openapi";
import { Amount } from "../money-schemas.js";
import { Metadata, Timestamp, Transfer, Uuid } from "../schemas.js";
import { Problem } from "../problem.js";

export const LegIn = z.strictObject({ debit_account_id: Uuid, credit_account_id: Uuid, amount: Amount }).openapi("LegCreate");

export const TransferIn = z
  .strictObject({
    id: Uuid.optional().openapi({ description: "your id for the transfer (uuid); generated when absent" }),
    type: z.enum(["standard", "pending"]).default("standard").openapi({ description: "pending places a hold, to post or void later" }),
    legs: z.array(LegIn).min(1).max(64),
    timeout_seconds: z
      .number()
      .int()
      .min(1)
      .max(366 * 24 * 3600)
      .optional()
      .openapi({ description: "pending only: release the hold after this long" }),
    effective_at: Timestamp.optional().openapi({
      description: "when it happened; defaults to now; at most 5 minutes ahead of the service's clock (refused otherwise: 400 naming effective_at)",
    }),
    metadata: Metadata.optional(),
  })
  .refine((t) => t.timeout_seconds === undefined || t.type === "pending", { message: "only pending transfers have a timeout", path: ["timeout_seconds"] })
  .openapi("TransferCreate");

export const TransferBatchIn = z.strictObject({ transfers: z.array(TransferIn).min(1).max(1000) }).openapi("TransferBatchCreate");

export const TransferBatchOut = z
  .object({
    results: z.array(
      z.object({
        status: z.enum(["created", "refused"]),
        transfer: Transfer.optional(),
        error: Problem.optional(),
      }),
    ),
  })
  .openapi("TransferBatchResult");
