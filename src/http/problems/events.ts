import type { ProblemExplanations } from "./explanation.js";

/** Problems of the event log and balance monitors. */
export const eventProblems = {
  balance_monitor_not_found: {
    means:
      "No balance monitor has this id that this key may see: a marketplace or operator key sees the monitors set by its tenant, finance and admin keys every monitor.",
    causes: ["a mistyped or truncated monitor id", "a monitor of another tenant", "a monitor that was deleted"],
    action: "fix_request",
    todo: "Use the `id` answered by POST /v1/balance-monitors, or find it with GET /v1/balance-monitors.",
    example: "balance monitor 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist",
  },
} satisfies ProblemExplanations;
