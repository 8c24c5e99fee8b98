import type { ProblemExplanations } from "./explanation.js";

/** Problems of marketplaces, operators, customers, usage records, holds, fee schedules and credit. */
export const usageProblems = {
  period_closing: {
    means:
      "The record's (or correction's) effective time falls in an accounting period finance is closing: nothing new is back-dated into it until it is closed (then it is booked in the open period) or reopened.",
    causes: ["late usage for last month sent while finance closes it", "a usage reversal of a record in the period being closed"],
    action: "wait",
    todo: "Send it again once the period is closed (it is then booked in the current open period, with a reference to what it corrects), or open a dispute for a correction that cannot wait.",
    example: "the period 2026-11 of marketplace gpu-market is being closed: usage effective 2026-11-28T10:00:00.000Z cannot be posted into it now",
  },
  period_closed: {
    means: "The effective time asked for falls in a closed accounting period: nothing posts with an effective time inside it.",
    causes: ["a manual transfer, reversal or post of a hold dated into last month after finance closed it"],
    action: "fix_request",
    todo: "Leave effective_at out (a reversal is then booked at the start of the first open period after the closed one, a new transfer now), or give an instant in an open period; to correct the closed month itself, finance reopens it (a proposal a second key approves).",
    example: "the period 2026-11 of marketplace gpu-market is closed: nothing posts effective 2026-11-28T10:00:00.000Z",
  },
  period_transition: {
    means:
      "The accounting period cannot change to the status asked from the one it has: open → closing → closed, closing → open, closed → open by proposal; a period closes only after it ended.",
    causes: [
      "closing a month that has not ended",
      "closing a period that is not closing",
      "reopening a period that is not closed",
      "changing the time zone after a period was closed",
    ],
    action: "fix_request",
    todo: "Read the period (GET /v1/marketplaces/{id}/periods/{period}) and ask for the next status it may take.",
    example: "period 2026-12 of marketplace gpu-market ends at 2027-01-01T00:00:00.000Z: it cannot be closing before then",
  },
  marketplace_not_found: {
    means: "No marketplace has this id: marketplaces are created by an admin, with the id they choose.",
    causes: ["a marketplace not created yet (POST /v1/marketplaces)", "a typo in the id (ids are lower case)"],
    action: "fix_request",
    todo: "Use the id of an existing marketplace (GET /v1/marketplaces), or ask an admin to create it first.",
    example: "marketplace gpu-market does not exist",
  },
  customer_not_found: {
    means: "No customer has this id in this marketplace (customer ids are per marketplace), or it is another tenant's.",
    causes: ["usage posted before the customer was created (POST /v1/customers)", "the customer id of another marketplace"],
    action: "fix_request",
    todo: "Create the customer in this marketplace first, or correct the `customer_id`; admin and finance keys also name the marketplace (`marketplace_id`).",
    example: "customer acme-ai does not exist in marketplace gpu-market",
    exampleErrors: [{ path: "customer_id", message: "does not exist" }],
  },
  operator_not_found: {
    means: "No operator has this id, or it does not sell through this marketplace (or it is not visible to this key).",
    causes: [
      "usage posted for an operator not registered with the marketplace (POST /v1/operators)",
      "an operator invited by the marketplace that has not accepted the invitation yet",
    ],
    action: "fix_request",
    todo: "Register the operator with the marketplace (or wait until it accepts the marketplace's invitation), then post the usage again.",
    example: "operator op-datacenter-7 is not registered with marketplace gpu-market",
    exampleErrors: [{ path: "operator_id", message: "is not registered" }],
  },
  usage_not_found: {
    means: "No usage record has this id, or it belongs to another marketplace.",
    causes: ["the `external_id` used where the record's `id` is expected", "a record of another marketplace"],
    action: "fix_request",
    todo: "Use the `id` answered when the record was posted (or find it with GET /v1/usage).",
    example: "usage record 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist",
  },
  usage_batch_not_found: {
    means: "No usage batch has this id, or it belongs to another marketplace.",
    causes: ["a batch of another marketplace", "an id that is not a `batch_id` answered by POST /v1/usage/batch"],
    action: "fix_request",
    todo: "Use the `batch_id` answered when the batch was posted (or find it with GET /v1/usage-batches), with a key of the same marketplace.",
    example: "usage batch ub_01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist",
  },
  hold_not_found: {
    means: "No hold has this id in this marketplace.",
    causes: ["a hold of another marketplace", "the id of the hold's transfer instead of the hold's own id"],
    action: "fix_request",
    todo: "Use the `id` answered by POST /v1/holds, with a key of the same marketplace.",
    example: "hold 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist",
  },
  hold_closed: {
    means: "The hold was closed or has expired: no more usage can be charged to it, and what it reserved was released.",
    causes: ["usage reported after the job's hold was closed", "a hold whose `expires_at` has passed"],
    action: "stop",
    todo: "Do not charge this hold again: open a new hold for the customer (POST /v1/holds), or post the usage without `hold_id` to charge the customer's balance.",
    example: "hold 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e is expired",
  },
  marketplace_exists: {
    means: "A marketplace with this id already exists under another name.",
    causes: ["an id already chosen by someone else", "creating the same marketplace again with a changed name"],
    action: "fix_request",
    todo: "Choose another id, or use the existing marketplace. Creating the identical marketplace again answers the existing one.",
    example: "marketplace gpu-market already exists with another name",
  },
  customer_exists: {
    means: "A customer with this id already exists in this marketplace with other attributes (billing, metadata or credit limits).",
    causes: ["creating a customer again with another billing", "changing a credit limit through creation instead of by proposal"],
    action: "fix_request",
    todo: "Use the existing customer, or another id; change a credit limit with PUT /v1/customers/{id}/credit-limits/{asset}.",
    example: "customer acme-ai already exists with other attributes (billing prepaid)",
  },
  customer_retired: {
    means: "The customer was retired: it takes no new usage, holds or deposits. Its balance can still be read and settled.",
    causes: ["usage reported for a customer the marketplace has retired", "a job still running for a retired customer"],
    action: "fix_request",
    todo: "Stop sending usage, holds and deposits for this customer; bill the work to an active customer, or ask the marketplace whether the customer should have been retired.",
    example:
      "customer acme-ai of marketplace gpu-market was retired at 2026-11-01T00:00:00.000Z: it takes no new usage, holds or deposits (its balance can still be read and settled)",
  },
  operator_exists: {
    means: "An operator with this id is already registered under another name. Operator ids are global.",
    causes: ["an id already taken by another operator", "registering the same operator with a changed name"],
    action: "fix_request",
    todo: "Register the operator under its existing name, or choose another id if it is a different operator.",
    example: "operator op-datacenter-7 is registered under another name",
  },
  invitation_not_found: {
    means: "This marketplace has not invited this operator, so there is no invitation to accept.",
    causes: ["accepting before the marketplace registered the operator", "a typo in the marketplace id"],
    action: "fix_request",
    todo: "Check the marketplace id against GET /v1/operators/{id}/invitations, or ask the marketplace to register the operator first.",
    example: "marketplace gpu-market has not invited operator op-datacenter-7",
  },
  fee_schedule_exists: {
    means: "A fee schedule version may not take effect at this instant: one already does, or usage after it has already been rated.",
    causes: ["publishing the same effective_from twice", "a new version back-dated before usage already posted"],
    action: "fix_request",
    todo: "Give `effective_from` an instant after the latest rated usage the detail names (and after the latest version).",
    example: "usage up to 2026-11-29T11:00:00.000Z was already rated; a new version must take effect after it",
    exampleErrors: [{ path: "effective_from", message: "is before usage already rated" }],
  },
  usage_conflict: {
    means: "A usage record with this `external_id` was already posted with different content. A record is posted once; corrections are reversals.",
    causes: ["an external_id reused for another job or hour", "a re-sent record whose quantity or price changed"],
    action: "fix_request",
    todo: "Give each record a unique `external_id`; to correct a posted record, reverse it (POST /v1/usage/{id}/reverse) and post the corrected one under a new id.",
    example: "usage record job-42:hour-7 was already posted with different content",
  },
  no_fee_schedule: {
    means: "The marketplace has no fee schedule in force at the end of the record's period, so the usage cannot be rated.",
    causes: ["a new marketplace whose first schedule is not published yet", "a record dated before the first schedule takes effect"],
    action: "ask",
    todo: "Ask an admin to publish a fee schedule for the marketplace (POST /v1/marketplaces/{id}/fee-schedules) effective before the record's period, then post the record again.",
    example: "marketplace gpu-market has no fee schedule in force at 2026-11-29T12:00:00.000Z",
  },
  usage_in_future: {
    means: "The record's period ends more than 5 minutes from now: usage is reported after it happened.",
    causes: ["a clock ahead of the service's", "a period end in local time sent as UTC"],
    action: "fix_request",
    todo: "Send `period_end` as the instant the usage ended (RFC 3339 with its offset), and check the client's clock.",
    example: "the period ends at 2026-11-29T14:00:00.000Z, more than 5 minutes from now",
  },
  capacity_exceeded: {
    means:
      "The operator declared how many units of this resource it can sell over time (its capacity), and this record, with the usage already posted for the operator and resource in every marketplace over the record's period, claims more unit-hours than that period holds.",
    causes: [
      "a record posted twice under two external ids, or by two marketplaces for the same machine time",
      "a quantity in the wrong unit (milliseconds as seconds) or a period too short",
      "the operator's capacity declaration is out of date",
    ],
    action: "fix_request",
    todo: "Check the record's quantity, unit and period against what the operator can run (GET /v1/operators/{id}/capacity); if the machines are real, the operator declares its new capacity (POST /v1/operators/{id}/capacity), or the marketplace accepts such records for review (PUT /v1/marketplaces/{id}/capacity-policy).",
    example:
      "operator op-7 declared 16 gpu:h100 unit-hours of capacity from 2026-11-01T10:00:00.000Z to 2026-11-01T12:00:00.000Z; its usage in every marketplace already holds 12.5 of them, so 3.5 are free, less than the 4 this record claims",
    exampleErrors: [{ path: "quantity", message: "3.5 gpu:h100 unit-hours free in the period" }],
  },
  capacity_exists: {
    means: "A version of the operator's capacity of this resource already takes effect at this instant: versions are never changed.",
    causes: ["the same declaration sent twice with two Idempotency-Keys", "a correction sent with the effective_from of the version it corrects"],
    action: "fix_request",
    todo: "Read the versions (GET /v1/operators/{id}/capacity) and declare the change from another instant (a later version replaces an earlier one from its effective_from).",
    example: "a capacity version of gpu:h100 taking effect at 2026-10-01T00:00:00.000Z exists already",
    exampleErrors: [{ path: "effective_from", message: "a version of this resource takes effect at this instant already" }],
  },
  operator_costs_not_found: {
    means: "The operator has set no costs of this resource (machine class): margins and what-ifs need them.",
    causes: ["the costs were never set", "a resource named differently from its usage records (gpu:h100 is not gpu:h100-80gb)"],
    action: "fix_request",
    todo: "Set them (PUT /v1/operators/{id}/costs/{resource}) or, for a what-if, give every cost in the body.",
    example: "operator op-7 has set no costs of gpu:h100",
  },
  usage_limit_exceeded: {
    means:
      "The record is beyond the marketplace's usage limits: its gross is above max_gross_per_record, or its quantity above what max_quantity_per_second allows over its period.",
    causes: ["a quantity in the wrong unit (milliseconds as seconds)", "a period too short for the quantity", "a price with a misplaced decimal point"],
    action: "fix_request",
    todo: "Check the record's quantity, unit, period and price; if the usage is real, ask an admin to raise the marketplace's limits (PUT /v1/marketplaces/{id}/usage-limits/{asset}).",
    example: "quantity: 7200 gpu_second in a period of 3600 s is more than the limit of 1 gpu_second per second (max_quantity_per_second) allows: at most 3600",
    exampleErrors: [
      {
        path: "quantity",
        message: "7200 gpu_second in a period of 3600 s is more than the limit of 1 gpu_second per second (max_quantity_per_second) allows: at most 3600",
      },
    ],
  },
  credit_limit_exceeded: {
    means: "A postpaid customer's usage would take what it owes beyond its credit limit in the asset (or it has none in that asset).",
    causes: ["a customer that has used up its credit", "usage in an asset the customer has no credit limit in"],
    action: "ask",
    todo: "Ask finance or an admin to raise the customer's credit limit (a four-eyes proposal: PUT /v1/customers/{id}/credit-limits/{asset}), or settle what it owes first.",
    example: "customer_id: customer acme-ai's credit limit in USDC is 500; 12.5 of it is left, less than the 20.16 USDC this record costs",
    exampleErrors: [
      { path: "customer_id", message: "customer acme-ai's credit limit in USDC is 500; 12.5 of it is left, less than the 20.16 USDC this record costs" },
    ],
  },
  credit_limit_in_use: {
    means: "The marketplace's credit limit cannot be lowered below the credit operators were already paid out of.",
    causes: ["lowering a credit limit before the marketplace has settled what operators were paid beyond its funds"],
    action: "wait",
    todo: "Wait until the marketplace has settled that much (its receipts are recorded), then propose the lower limit again.",
    example:
      "a credit limit of 1000 USDC would take back credit that was paid out: operator op-datacenter-7 was paid 250 USDC beyond its funded earnings; lower it once the marketplace has settled that much",
  },
  rates_to_zero: {
    means: "Quantity × unit price is less than one smallest unit of the asset: the record would be worth nothing.",
    causes: ["a unit price in the smallest unit instead of display units", "a tiny quantity billed on its own"],
    action: "fix_request",
    todo: "Give `unit_price` in the asset's display units (e.g. USDC), aggregate tiny records into larger periods, or give the `amount` in smallest units.",
    example: "quantity × unit_price is less than one smallest unit of the asset",
  },
  atomic_batch_aborted: {
    means: "This record was not written because another record of the same atomic batch was rejected: an atomic batch is all or nothing.",
    causes: ["one invalid record in a batch sent with `atomic: true`"],
    action: "fix_request",
    todo: "Fix the records rejected with another code in the same answer, then send the whole batch again (the same Idempotency-Key may be reused).",
    example: "not written: another record of this atomic batch was rejected",
  },
} satisfies ProblemExplanations;
