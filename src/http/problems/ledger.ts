import type { ProblemExplanations } from "./explanation.js";

/** Problems of the ledger: assets, accounts, transfers and their holds. */
export const ledgerProblems = {
  asset_not_found: {
    means: "No asset has this id or code: assets are registered per deployment, by an admin.",
    causes: ["an asset code in the wrong case (codes are upper case: USDC)", "an asset not registered yet on this deployment"],
    action: "fix_request",
    todo: "Use a code or id from GET /v1/assets, or ask an admin to register the asset (POST /v1/assets) first.",
    example: "asset USDT does not exist",
    exampleErrors: [{ path: "asset", message: "does not exist" }],
  },
  account_not_found: {
    means: "No account with this id exists, or it belongs to another tenant (which answers exactly like a missing one).",
    causes: ["an id copied from another deployment or environment", "an account of another marketplace", "a typo in the id"],
    action: "fix_request",
    todo: "Use the id of an account this key can see (as answered when it was opened), or open the account first (POST /v1/accounts).",
    example: "account 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist",
  },
  pending_not_found: {
    means: "The transfer to post or void does not exist (or belongs to another tenant).",
    causes: ["the id of the request instead of the id of the pending transfer it created", "a transfer of another marketplace"],
    action: "fix_request",
    todo: "Post or void the `id` answered when the pending transfer was created (type pending).",
    example: "pending transfer 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist",
  },
  transfer_not_found: {
    means: "No transfer with this id exists, or it belongs to another tenant.",
    causes: ["an id from another deployment", "a transfer of another marketplace", "a typo in the id"],
    action: "fix_request",
    todo: "Use the `id` answered when the transfer was created, by a key of the same tenant.",
    example: "transfer 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e does not exist",
  },
  asset_exists: {
    means: "An asset with this code, or one settling as the same token on the same chain, is already registered with other attributes.",
    causes: ["registering USDC again with another scale or token address", "two codes for one token contract"],
    action: "fix_request",
    todo: "Use the existing asset (GET /v1/assets), or register the new one under another code. Sending the identical asset again is not an error: it answers the existing one.",
    example: "asset USDC already exists with different attributes",
  },
  account_exists: {
    means: "An account with this `ref` (per asset and marketplace), or with this id, already exists with other attributes.",
    causes: ["opening an account again with the same ref but another code, side or flags", "a client-chosen id already taken"],
    action: "fix_request",
    todo: "Read the existing account and use it, or choose another `ref` or id. Opening the identical account again answers the existing one.",
    example: "account wallet:c42 already exists with different attributes",
  },
  pending_already_posted: {
    means: "The pending transfer was already posted: a hold is posted or voided once.",
    causes: ["a second post of the same hold with a new Idempotency-Key", "a post racing a void"],
    action: "stop",
    todo: "Do not post it again: read the transfer (GET /v1/transfers/{id}) to see what was posted. A retry of the same post should reuse its original Idempotency-Key, which replays the first answer.",
    example: "pending transfer 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e was already posted",
  },
  pending_already_voided: {
    means: "The pending transfer was already voided: its funds were released and it can no longer be posted or voided.",
    causes: ["a post after a void of the same hold", "a second void with a new Idempotency-Key"],
    action: "stop",
    todo: "Do not post or void it again: to move the money now, create a new transfer (or a new hold) instead.",
    example: "pending transfer 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e was already voided",
  },
  pending_expired: {
    means: "The pending transfer passed its timeout and expired: its funds were released.",
    causes: ["a post or void after `timeout_seconds` elapsed", "a timeout too short for the job it held funds for"],
    action: "stop",
    todo: "Do not post or void it again: create a new pending transfer (with a longer timeout) or a standard transfer for the amount.",
    example: "pending transfer 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e expired",
  },
  already_reversed: {
    means: "The transfer (or usage record) was already reversed. A transfer is reversed once, in full.",
    causes: ["a second reversal with a new Idempotency-Key", "reversing a usage record whose transfer was reversed"],
    action: "stop",
    todo: "Do not reverse it again; read the transfer to find its reversal. To correct a reversal, record a new transfer.",
    example: "transfer 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e was already reversed",
  },
  asset_retired: {
    means: "The asset was retired: it takes no new accounts, transfers, usage, holds or deposits. Its balances can still be read and paid out.",
    causes: ["new business in an asset the platform has stopped using", "a client still configured with the old asset's code"],
    action: "fix_request",
    todo: "Use the asset that replaced it (see GET /v1/assets); if the asset should still be in use, ask an admin.",
    example:
      "asset USDC-OLD was retired at 2026-11-01T00:00:00.000Z: it takes no new accounts, transfers, usage, holds or deposits (its balances can still be read and paid out)",
  },
  payouts_in_flight: {
    means: "Payouts of the asset are on their way on its current settlement, so how the asset settles cannot change until they have ended.",
    causes: ["approving a settlement change while payouts are pending, signed or submitted"],
    action: "wait",
    todo: "Wait until the payouts the detail counts are confirmed or failed (or cancel the pending ones: POST /v1/payouts/{id}/cancel), then approve the change again.",
    example:
      "2 payouts of asset USDC are on their way on the current settlement (1 pending, 1 submitted): change how it settles once they have ended (a pending payout can be cancelled: POST /v1/payouts/{id}/cancel; the others end when confirmed or failed)",
  },
  asset_mismatch: {
    means: "A leg moves money between accounts of different assets; a leg balances in one asset.",
    causes: ["a debit account in USDC and a credit account in ETH", "an account id of the wrong asset picked by ref"],
    action: "fix_request",
    todo: "Use two accounts of the same asset in each leg; to exchange assets, record one leg per asset through a clearing account.",
    example: "leg 0 moves between accounts of different assets",
    exampleErrors: [{ path: "legs.0", message: "debit and credit accounts hold different assets" }],
  },
  exceeds_credits: {
    means:
      "Insufficient funds: the debit account may not spend more than its credits (debits_must_not_exceed_credits, plus any credit limit), and this transfer would take it past that.",
    causes: ["a transfer larger than the available balance (pending holds count against it)", "a payout larger than the operator's available earnings"],
    action: "fix_request",
    todo: "Lower the amount to at most what the detail says is available, or fund the account first (a deposit or transfer into it), then retry.",
    example:
      "insufficient funds on account 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e: 1000000 available, this transfer takes 1500000, 500000 short (amounts in the asset's smallest unit)",
  },
  exceeds_debits: {
    means: "The credit account may not hold more credits than debits (credits_must_not_exceed_debits), and this transfer would take it past that.",
    causes: ["crediting a debit-normal account (such as a receivable) beyond what it was debited", "legs with debit and credit accounts swapped"],
    action: "fix_request",
    todo: "Check the direction of the legs and lower the amount to at most what the detail says is left to credit against.",
    example:
      "account 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e would have more credits than debits: 250000 of debits left to credit against, 750000 short (amounts in the asset's smallest unit)",
  },
  overflow: {
    means: "A balance would exceed 2^256 - 1 smallest units, the largest amount the ledger holds.",
    causes: ["an amount far beyond any real one, e.g. a value already scaled to the smallest unit scaled again"],
    action: "fix_request",
    todo: "Check the amount's scale (amounts are in the asset's smallest unit: 1.5 USDC is \"1500000\") and send a realistic amount.",
    example: "a balance of account 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e would exceed 2^256 - 1",
  },
  not_pending: {
    means: "The transfer to post or void exists but is not a pending transfer (it is standard, a reversal, or a post or void itself).",
    causes: ["posting a standard transfer", "posting the post_pending transfer instead of the pending one"],
    action: "fix_request",
    todo: "Post or void the id of a transfer of type `pending`; standard transfers are final and are corrected by reversal.",
    example: "transfer 01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e is not a pending transfer",
  },
  not_reversible: {
    means: "This transfer cannot be reversed: pending transfers are voided instead, and a reversal is not reversed again.",
    causes: ["reversing a hold instead of voiding it", "reversing a reversal", "reversing a transfer that posted nothing"],
    action: "fix_request",
    todo: "Void a pending transfer (POST /v1/transfers/{id}/void); to undo a reversal, record a new standard transfer.",
    example: "a pending transfer cannot be reversed; void it instead",
  },
  post_amount_exceeds_pending: {
    means: "The amount to post is more than the hold reserved.",
    causes: ["posting the job's final cost when it ran past what was held", "an amount in the wrong unit"],
    action: "fix_request",
    todo: "Post at most the pending amount the detail names; charge the rest with a separate transfer.",
    example: "amount 2000000 exceeds the pending amount 1500000",
  },
  partial_post_needs_single_leg: {
    means: "A partial amount can only be posted for a pending transfer with one leg: with several legs it would be unclear which leg to shorten.",
    causes: ["an `amount` in the post of a multi-leg hold"],
    action: "fix_request",
    todo: "Post the multi-leg hold in full (without `amount`), or hold each leg as its own pending transfer when partial posts are needed.",
    example: "a partial amount can only be posted for a pending transfer with one leg",
  },
} satisfies ProblemExplanations;
