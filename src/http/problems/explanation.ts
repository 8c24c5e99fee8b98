import type { ProblemCode } from "../problem.js";

/**
 * What a client does about a problem, as one of a few kinds (the page shows its label, and a test
 * checks that every problem names one).
 */
export const problemActions = {
  fix_request: "Fix the request, then send it again",
  retry: "Retry the same request, with the same Idempotency-Key",
  wait: "Wait until the state changes, then retry",
  ask: "Ask someone with the right key or role",
  stop: "Do not retry: the outcome is already settled",
  report: "Report it, quoting the request id",
} as const;
export type ProblemAction = keyof typeof problemActions;

/** The explanation of one problem code: the page at /problems/<code> and docs/problems.md are made from it. */
export interface ProblemExplanation {
  /** What the problem means, in a sentence or two. */
  means: string;
  /** What typically leads to it. */
  causes: readonly string[];
  /** The kind of action that resolves it, and the action in words. */
  action: ProblemAction;
  todo: string;
  /** A realistic `detail` of this problem, as the service writes it (the OpenAPI document's example). */
  example: string;
  /** The `errors` of that example, for problems that name fields. */
  exampleErrors?: ReadonlyArray<{ path: string; message: string }>;
}

/** Explanations of some codes (one file per area): together they must cover every code (catalog.ts). */
export type ProblemExplanations = Partial<Record<ProblemCode, ProblemExplanation>>;
