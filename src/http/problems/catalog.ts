import { problemBody, problemCodes, problemStatus, type Problem, type ProblemCode } from "../problem.js";
import { ledgerProblems } from "./ledger.js";
import { payoutProblems } from "./payouts.js";
import { requestProblems } from "./request.js";
import { usageProblems } from "./usage.js";
import { webhookProblems } from "./webhooks.js";
import { eventProblems } from "./events.js";
import type { ProblemExplanation } from "./explanation.js";

/**
 * Every problem code explained, in one place. Typed as a complete record: a code added to
 * `httpStatusOf` (problem.ts) without an explanation in one of the area files is a type error here.
 */
export const problemCatalog: Record<ProblemCode, ProblemExplanation> = {
  ...requestProblems,
  ...ledgerProblems,
  ...usageProblems,
  ...payoutProblems,
  ...webhookProblems,
  ...eventProblems,
};

/** Where the page of a problem is served, which is also the problem's `type`. */
export const problemPath = (code: ProblemCode) => `/problems/${code}`;

export const isProblemCode = (code: string): code is ProblemCode => Object.hasOwn(problemCatalog, code);

/** The problem document of a code's example, as the service would answer it. */
export function exampleProblem(code: ProblemCode): Problem {
  const e = problemCatalog[code];
  return problemBody(code, e.example, [...(e.exampleErrors ?? [])], "0193a5c2-7d41-7e6b-8f20-3c9d1e4b5a67");
}

/** The codes in catalog order (problem.ts's), with their status. */
export const catalogEntries = () =>
  problemCodes.map((code) => ({ code, status: problemStatus(code), title: problemBody(code, "").title, ...problemCatalog[code] }));
