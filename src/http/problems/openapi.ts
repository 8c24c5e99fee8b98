import type { OpenAPIHono } from "@hono/zod-openapi";
import { problemCodes, problemStatus, type ProblemCode } from "../problem.js";
import type { AppEnv } from "../request-context.js";
import { exampleProblem, problemCatalog, problemPath } from "./catalog.js";
import { problemActions } from "./explanation.js";

/**
 * The OpenAPI document's error examples: one named example per problem code (a component, made
 * from the catalog), listed under each error status of every operation for the codes of that status.
 */
const componentName = (code: ProblemCode) => `problem_${code}`;

const codesOf = (status: number) => problemCodes.filter((code) => problemStatus(code) === status);

/** The named examples of one error status: a reference to each of its codes' examples. */
export function problemExamples(status: number): Record<string, { $ref: string }> {
  return Object.fromEntries(codesOf(status).map((code) => [code, { $ref: `#/components/examples/${componentName(code)}` }]));
}

/** Registers the example of every code whose status is among `statuses` (those the operations list). */
export function registerProblemExamples(app: OpenAPIHono<AppEnv>, statuses: number[]): void {
  for (const status of statuses) {
    for (const code of codesOf(status)) {
      const e = problemCatalog[code];
      const value = exampleProblem(code);
      app.openAPIRegistry.registerComponent("examples", componentName(code), {
        summary: `${code}: ${value.title}`,
        description: `${e.means} **${problemActions[e.action]}:** ${e.todo} (${problemPath(code)})`,
        value,
      });
    }
  }
}
