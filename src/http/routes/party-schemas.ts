import { z } from "@hono/zod-openapi";
import { Metadata, Timestamp } from "../schemas.js";

export const Marketplace = z.object({ id: z.string(), name: z.string(), metadata: Metadata, created_at: Timestamp }).openapi("Marketplace");
export const Operator = z.object({ id: z.string(), name: z.string(), marketplace_ids: z.array(z.string()), metadata: Metadata, created_at: Timestamp }).openapi("Operator");
export const Customer = z.object({ marketplace_id: z.string(), id: z.string(), billing: z.enum(["prepaid", "postpaid"]), metadata: Metadata, created_at: Timestamp }).openapi("Customer");

export const partyOut = (p: { id: string; name: string; metadata: Record<string, unknown>; createdAt: Date }) =>
  ({ id: p.id, name: p.name, metadata: p.metadata, created_at: p.createdAt.toISOString() });
