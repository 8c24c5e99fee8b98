import type { ProblemExplanations } from "./explanation.js";

/** Problems of payouts and payout addresses, reconciliation, and four-eyes proposals. */
export const payoutProblems = {
  payout_not_found: {
    means: "No payout has this id, or it is another operator's.",
    causes: ["the Idempotency-Key of the payout request used as its id", "a payout of another operator"],
    action: "fix_request",
    todo: "Use the `id` answered by POST /v1/payouts (or find it with GET /v1/payouts).",
    example: "payout 8d3f5a1c-2b4e-8f6a-9c1d-0e7b3a5f2c48 does not exist",
  },
  challenge_not_found: {
    means: "No payout-address challenge has this id for this operator.",
    causes: ["a challenge asked for by another operator", "a mistyped `challenge_id`"],
    action: "fix_request",
    todo: "Ask for a challenge for this operator (POST /v1/operators/{id}/payout-address-challenges), sign its message, and send its id with the signature.",
    example: "challenge 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist for this operator",
  },
  payout_not_pending: {
    means: "The payout is no longer pending: it was sent to the chain, confirmed, failed or cancelled, so it cannot be cancelled, approved or marked paid.",
    causes: ["cancelling a payout the worker has already submitted", "marking paid a payout that was cancelled"],
    action: "stop",
    todo: "Do not cancel or mark it paid again: read the payout (GET /v1/payouts/{id}) to see its status; a failed or cancelled payout's funds are back on the operator's balance, to be asked for again.",
    example: "payout 8d3f5a1c-2b4e-8f6a-9c1d-0e7b3a5f2c48 is submitted: only pending payouts can be cancelled",
  },
  payout_address_missing: {
    means: "The operator has no verified payout address on the chain the asset settles on.",
    causes: ["a first payout before the operator proved an address", "an address verified on another chain"],
    action: "fix_request",
    todo: "Have the operator prove an address on that chain (POST /v1/operators/{id}/payout-address-challenges, then PUT /v1/operators/{id}/payout-address), then ask for the payout again.",
    example: "operator op-datacenter-7 has no verified payout address on chain 8453",
    exampleErrors: [{ path: "operator_id", message: "has no verified payout address on this chain" }],
  },
  payout_below_minimum: {
    means: "The amount is below the asset's payout policy minimum (payouts smaller than it would cost more in gas than they are worth).",
    causes: ["paying out small balances one by one"],
    action: "fix_request",
    todo: "Ask for at least the minimum the detail names, e.g. once more earnings have accrued.",
    example: "the smallest payout of USDC is 10000000 (in its smallest units)",
    exampleErrors: [{ path: "amount", message: "must be at least 10000000" }],
  },
  payout_limit_exceeded: {
    means: "The amount is above the largest payout allowed (per payout or per UTC day), by the asset's payout policy or the operator's own caps.",
    causes: ["one payout of a large balance", "several payouts the same day adding up past the daily cap"],
    action: "fix_request",
    todo: "Ask for at most what the detail says is left (split it over days if needed), or ask finance to raise the cap (PUT /v1/operators/{id}/payout-limits/{asset}, approved by a second key).",
    example: "amount: operator op-datacenter-7 may be paid at most 5000000000 USDC a day (the payout policy's max_per_day); 1250000000 is left today (UTC)",
    exampleErrors: [
      {
        path: "amount",
        message: "operator op-datacenter-7 may be paid at most 5000000000 USDC a day (the payout policy's max_per_day); 1250000000 is left today (UTC)",
      },
    ],
  },
  payout_unfunded: {
    means: "Part of the operator's available balance is earnings whose money the marketplace has not paid in yet; only funded earnings are paid out.",
    causes: ["a marketplace that has not settled its customers' usage yet", "postpaid usage not yet paid"],
    action: "wait",
    todo: "Ask for at most what the detail says can be paid now, or wait until the marketplace's receipts are recorded and ask for the rest then.",
    example:
      "amount: operator op-datacenter-7 can be paid 120 USDC now, less than the 150 asked for: the rest of its available 150 USDC is earnings whose money has not been received (awaiting funds from marketplace gpu-market: 30 USDC)",
    exampleErrors: [
      {
        path: "amount",
        message:
          "operator op-datacenter-7 can be paid 120 USDC now, less than the 150 asked for: the rest of its available 150 USDC is earnings whose money has not been received (awaiting funds from marketplace gpu-market: 30 USDC)",
      },
    ],
  },
  payout_not_approved: {
    means: "The payout is above its policy's approval threshold and waits for a second key's approval; it cannot be marked paid before.",
    causes: ["marking an off-chain payout paid before its proposal was approved"],
    action: "ask",
    todo: "Ask another person to approve the payout's proposal (POST /v1/proposals/{id}/approve), then mark it paid.",
    example: "payout 8d3f5a1c-2b4e-8f6a-9c1d-0e7b3a5f2c48 waits for a second key's approval (above the approval threshold); it cannot be marked paid before",
  },
  no_rate_source: {
    means:
      "Nothing gives a rate between the two assets: no on-chain price feed is configured for the pair and finance entered no rate, so earnings cannot be converted into that asset.",
    causes: ["a payout preference naming an asset no feed prices against the earnings asset", "a new token before finance entered its first rate"],
    action: "ask",
    todo: "Choose an asset that has a rate source, or ask finance to enter a rate (POST /v1/rates, approved by a second key) or the service's operators to configure a price feed for the pair.",
    example: "nothing gives a rate between USD and NET: no price feed is configured for the pair and finance entered no rate (POST /v1/rates)",
    exampleErrors: [{ path: "splits.1.asset", message: "has no rate source" }],
  },
  chain_not_configured: {
    means: "The asset settles on (or the request names) a chain this service has no settings for, so it cannot pay or check anything there.",
    causes: ["an asset registered for a chain the deployment does not serve", "a payout address for a chain not in the service's chain settings"],
    action: "ask",
    todo: "Use a chain the service is configured for, or ask the service's operators to add the chain to its settings.",
    example: "chain 10 is not configured on this service",
    exampleErrors: [{ path: "chain_id", message: "is not a configured chain" }],
  },
  challenge_invalid: {
    means: "The payout-address challenge can no longer be used: it expired, was used already, or was issued for another chain or address.",
    causes: ["a signature sent after the challenge expired", "the same challenge used twice", "a challenge asked for another address"],
    action: "fix_request",
    todo: "Ask for a new challenge for this chain and address, sign its message, and send it before it expires.",
    example: "the challenge expired: ask for a new one",
  },
  signature_invalid: {
    means: "The signature is not the address's signature (EIP-191 personal_sign) of the message it was asked to sign.",
    causes: ["signing with another key than the address's", "signing a changed message (whitespace, line ends)", "a signature of another challenge"],
    action: "fix_request",
    todo: "Sign the challenge's exact `message` with the address's own key (personal_sign) and send that signature.",
    example: "the signature is not the address's signature of the challenge message",
    exampleErrors: [{ path: "signature", message: "does not verify" }],
  },
  reconciliation_not_found: {
    means: "No reconciliation run has this id.",
    causes: ["an id from another deployment", "a typo in the id"],
    action: "fix_request",
    todo: "Use the `id` answered by POST /v1/reconciliations (or find it with GET /v1/reconciliations).",
    example: "reconciliation 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist",
  },
  reconciliation_item_not_found: {
    means: "The reconciliation run has no item with this id.",
    causes: ["an item id of another run"],
    action: "fix_request",
    todo: "Use an item id listed by GET /v1/reconciliations/{id} for this run.",
    example: "item 1042 of reconciliation 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist",
  },
  item_already_resolved: {
    means:
      "The reconciliation item was resolved already, or an adjustment for it waits for approval, or the discrepancy it shows was adjusted already through an item of another run.",
    causes: [
      "two people resolving the same item",
      "a second adjustment proposed for an item",
      "a note sent for an item whose adjustment waits for a second key",
      "runs over overlapping block ranges, each listing the same on-chain transfer (or the same payout never sent): one adjustment per discrepancy",
    ],
    action: "stop",
    todo: "Do not adjust it again: read the item (and its open proposal, or the item of the other run, if the detail names one). Approve or reject a waiting proposal; settle an item whose discrepancy was adjusted through another run with a note.",
    example: "item 1042 has an adjustment waiting for approval already (proposal 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e)",
  },
  proposal_not_found: {
    means: "No proposal has this id, or it is not visible to this key.",
    causes: ["the id of the change instead of the proposal's id (answered with status 202)", "a proposal of another marketplace"],
    action: "fix_request",
    todo: "Use the proposal `id` answered when the change was proposed (or find it with GET /v1/proposals).",
    example: "proposal 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist",
  },
  proposal_decided: {
    means: "The proposal was already approved or rejected (by someone else, or meanwhile).",
    causes: ["two approvers deciding the same proposal", "approving a proposal that was rejected"],
    action: "stop",
    todo: "Do not decide it again: read the proposal (GET /v1/proposals/{id}) to see who decided it and what it did; propose the change anew if it is still wanted.",
    example: "proposal 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e was already rejected by 0193a4f1-5c2e-7d8a-b6f0-2e4c9a1d7b35",
  },
  proposal_outdated: {
    means:
      "What the proposal would change has changed since it was made, so approving it would apply a change to a state nobody reviewed; or the key that proposed it has been revoked since.",
    causes: [
      "two proposals for the same asset's settlement, one approved before the other",
      "an operator's payout address changed after a payout_address proposal for it was made",
      "the proposer's API key was revoked after it proposed",
    ],
    action: "fix_request",
    todo: "Reject this proposal (POST /v1/proposals/{id}/reject) and propose the change again from the current state.",
    example:
      "asset USDC settles as token 0x833589fcd6edb6e08f4c7c32d4f71b54bda02913 on chain 8453 now, not as off-chain as when proposal 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e was made: reject it and propose the change again",
  },
  four_eyes: {
    means: "A proposal must be decided by another person than the one who proposed it: the deciding key must be independent of the proposing key.",
    causes: [
      "approving one's own proposal",
      "approving with a key created by the proposer's key (or with a common creator)",
      "deciding with the bootstrap admin key",
    ],
    action: "ask",
    todo: "Ask another person, with a key of their own (not created through the proposer's), to approve or reject it.",
    example: "proposal 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e must be decided by another key than the one that proposed it",
  },
  receipt_exists: {
    means: "Money with this reference was already recorded as received: a receipt is recorded once.",
    causes: ["recording the same bank transfer or chain payment twice", "a reference reused for another payment"],
    action: "stop",
    todo: "Do not record it again; if it is a different payment, give it its own reference (the bank's or the transaction's id).",
    example:
      'a receipt of USDC (proposal 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e) with reference "WIRE-2026-11-29-0042" (compared as "wire202611290042") is already recorded; money is received once',
    exampleErrors: [{ path: "reference", message: "already used" }],
  },
  dispute_not_found: {
    means: "No dispute has this id that this key may see: a marketplace sees its own disputes, an operator those of its usage.",
    causes: ["a mistyped or truncated dispute id", "a dispute of another marketplace"],
    action: "fix_request",
    todo: "Use the `id` answered by POST /v1/disputes, or find it with GET /v1/disputes.",
    example: "dispute 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist",
  },
  dispute_decided: {
    means: "The dispute was already upheld or rejected: a dispute is decided once.",
    causes: ["a second decision by another finance key", "rejecting a dispute that was upheld"],
    action: "stop",
    todo: "Do not decide it again: read the dispute (GET /v1/disputes/{id}) to see who decided it and how; to correct an upheld dispute, post the usage again.",
    example: "dispute 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e was already upheld by key 0193a5c2-7d41-7e6b-8f20-3c9d1e4b5a67",
  },
  usage_disputed: {
    means: "The usage record is in an open dispute, which decides it: it cannot be disputed a second time, nor reversed by hand meanwhile.",
    causes: ["disputing a record twice", "reversing a record while its dispute is open"],
    action: "wait",
    todo: "Wait for finance to decide the open dispute the detail names (POST /v1/disputes/{id}/uphold reverses the record; /reject releases it).",
    example: "usage record 8d3f5a1c-2b4e-8f6a-9c1d-0e7b3a5f2c48 is in open dispute 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e",
    exampleErrors: [{ path: "usage_ids", message: "record 8d3f5a1c-2b4e-8f6a-9c1d-0e7b3a5f2c48 is in open dispute 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e" }],
  },
  dispute_window_closed: {
    means: "The record was booked longer ago than its marketplace's dispute window: its operator's earnings are final.",
    causes: ["a customer's complaint about old usage", "a window shortened by an admin"],
    action: "ask",
    todo: "Settle it outside the service, or ask an admin to lengthen the window (PUT /v1/marketplaces/{id}/dispute-settings) if the contract allows.",
    example:
      "usage record 8d3f5a1c-2b4e-8f6a-9c1d-0e7b3a5f2c48 was booked at 2026-09-01T10:00:00.000Z; marketplace gpu-market's dispute window of 60 days closed at 2026-10-31T10:00:00.000Z",
    exampleErrors: [{ path: "usage_ids", message: "record 8d3f5a1c-2b4e-8f6a-9c1d-0e7b3a5f2c48 is outside the dispute window" }],
  },
  payout_withheld: {
    means:
      "Part of the operator's funded earnings cannot be paid now: earnings of usage in open disputes are held until decided, and what the operator owes the platform (its receivable, after a reversal of earnings it was already paid) is recovered from its earnings before anything is paid.",
    causes: ["a marketplace disputed some of the operator's usage", "usage the operator was paid for was reversed afterwards"],
    action: "wait",
    todo: "Ask for at most what the detail says can be paid now, or wait: the rest becomes payable when the disputes are rejected, or once new earnings have covered the receivable (GET /v1/operators/{id}/balances shows both).",
    example:
      "operator op-datacenter-7 can be paid 20 USDC now, less than the 150 asked for: 30 USDC of its earnings are held by open disputes, and it owes 100 USDC to the platform (its receivable, recovered from its earnings first)",
    exampleErrors: [
      {
        path: "amount",
        message:
          "operator op-datacenter-7 can be paid 20 USDC now, less than the 150 asked for: 30 USDC of its earnings are held by open disputes, and it owes 100 USDC to the platform (its receivable, recovered from its earnings first)",
      },
    ],
  },
} satisfies ProblemExplanations;
