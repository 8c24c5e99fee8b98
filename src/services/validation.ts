import type { z } from "zod";
import { LedgerError } from "../domain/errors.js";

/** Parses with a zod schema, turning its issues into LedgerError("invalid_request") with field paths. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: i.path.join(".") || "(root)", message: i.message }));
  throw new LedgerError("invalid_request", issues.map((i) => `${i.path}: ${i.message}`).join("; "), issues);
}
