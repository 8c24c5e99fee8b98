import type { ProblemExplanations } from "./explanation.js";

/** Problems of the request's shape, of who is calling, of idempotency keys, and of the service itself. */
export const requestProblems = {
  invalid_request: {
    means: "A field, parameter or header of the request breaks the operation's schema or rules. Nothing was checked against the ledger's state.",
    causes: [
      "a required field is missing, or a field has the wrong type (an amount sent as a JSON number instead of a string)",
      "an unknown body field or query parameter: a misspelt filter is refused, not ignored",
      "a value out of range: a page limit above 1000, a date before 1970, a cursor this API did not return",
    ],
    action: "fix_request",
    todo: "Read `errors`: each item names the field (`path`) and what is wrong with it. Correct those fields and send the request again; the same Idempotency-Key may be reused, since refusals are not remembered.",
    example: "legs.0.amount: must be an integer amount in the asset's smallest unit: digits only, no sign, decimal point or exponent",
    exampleErrors: [
      { path: "legs.0.amount", message: "must be an integer amount in the asset's smallest unit: digits only, no sign, decimal point or exponent" },
    ],
  },
  malformed_json: {
    means: "The body could not be read as JSON: it is empty where a JSON object is required, is not UTF-8, or is not valid JSON.",
    causes: [
      "a body built by string concatenation (a missing comma, a trailing comma, unquoted keys)",
      "a body cut short by the client or a proxy",
      "a body sent in another encoding than UTF-8",
    ],
    action: "fix_request",
    todo: "Serialize the body with a JSON library. The detail gives the line and column where the JSON breaks; fix it there and send the request again.",
    example: "the body is not valid JSON: expected ',' or '}' after property value at line 3, column 3",
  },
  idempotency_key_required: {
    means: "Every POST must carry an `Idempotency-Key` header, so that a retry after a timeout cannot do the same thing twice.",
    causes: ["the client sends POST requests without the header", "a proxy or SDK strips unknown headers"],
    action: "fix_request",
    todo: "Send `Idempotency-Key: <unique string>` (1-255 printable ASCII characters without spaces, e.g. a UUID) with every POST, and reuse the same key when you retry the same request.",
    example: "POST requests need an 'Idempotency-Key' header (any unique string of up to 255 printable ASCII characters without spaces, e.g. a UUID)",
  },
  unsupported_media_type: {
    means: "The body is not sent as uncompressed UTF-8 `application/json`.",
    causes: ["a missing or different Content-Type (form data, text/plain)", "a charset other than UTF-8", "a compressed body (Content-Encoding: gzip)"],
    action: "fix_request",
    todo: "Send the body as uncompressed UTF-8 JSON with `Content-Type: application/json`, then retry.",
    example: "send the body as 'Content-Type: application/json' (got 'application/x-www-form-urlencoded')",
  },
  payload_too_large: {
    means: "The body is larger than the service accepts for this operation (MAX_BODY_BYTES; usage batches have MAX_BATCH_BODY_BYTES).",
    causes: ["a transfer batch or usage batch with too many items", "large metadata (at most 16 KiB per object)"],
    action: "fix_request",
    todo: "Split the request into smaller ones (e.g. batches of fewer records) or trim metadata so that the body stays under the limit the detail names, then send each part.",
    example: "the body is larger than 1048576 bytes",
  },
  request_timeout: {
    means:
      "The body did not arrive within the time the service allows once it starts reading it (BODY_READ_TIMEOUT_MS). Nothing was done, and the connection was closed.",
    causes: ["a client or proxy that sends the body slowly or stops in the middle of it", "a large usage batch over a very slow link"],
    action: "retry",
    todo: "Retry the same request, its body whole, on a new connection (with the same Idempotency-Key); split a large batch into smaller ones if its body cannot arrive in time.",
    example: "the body did not arrive within 60000 ms (65536 bytes came); send it again, whole",
  },
  unauthorized: {
    means: "The request carries no API key, or one the service does not know (never issued, mistyped, or revoked).",
    causes: [
      "no `Authorization` header, or not in the form `Bearer <key>`",
      "a key that was revoked",
      "a key revoked while this write was under way (nothing was written)",
      "a key of another deployment",
    ],
    action: "fix_request",
    todo: "Send `Authorization: Bearer <key>` with a current key. If the key was revoked, ask an admin for a new one (POST /v1/api-keys).",
    example: "the API key is unknown or revoked",
  },
  forbidden: {
    means: "The key is valid, but its role may not perform this operation here (or, for a marketplace key, not on behalf of another marketplace).",
    causes: [
      "an operator or marketplace key calling an admin or finance operation",
      "an admin or finance key on the public listener (they are accepted on the management listener only)",
      "a key deciding a kind of proposal its role may not decide",
    ],
    action: "ask",
    todo: "Use a key of one of the roles the detail names, or ask an admin to do it or to create such a key for you.",
    example: "an operator key may not do this; it needs one of: admin, marketplace",
  },
  not_found: {
    means: "No route has this path (or it is served on the other listener), or the thing it names does not exist.",
    causes: [
      "a typo in the path, or a missing /v1 prefix",
      "a management route (docs, metrics) asked of the public listener",
      "an API key id that does not exist",
    ],
    action: "fix_request",
    todo: "Check the path against the OpenAPI document (/openapi.json) or the list in docs/api.md and send the request to the right one.",
    example: "no route for GET /v1/acounts/01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e",
  },
  method_not_allowed: {
    means: "The path exists, but does not take this HTTP method. The `Allow` header lists the methods it takes.",
    causes: ["a DELETE or PATCH where the API takes POST (changes are POSTed actions: /void, /reverse, /revoke)", "a GET sent as POST by a client"],
    action: "fix_request",
    todo: "Use one of the methods the detail and the `Allow` header name.",
    example: "/v1/assets takes GET, POST, not DELETE",
  },
  rate_limited: {
    means: "This API key sent more requests than its rate limit allows (RATE_LIMIT_PER_SECOND, bursts up to RATE_LIMIT_BURST, per key and per process).",
    causes: ["a loop without a pause", "many workers sharing one key", "retries without backoff"],
    action: "retry",
    todo: "Wait the seconds of the `Retry-After` header, then retry the same request (with the same Idempotency-Key); slow down or batch requests (POST /v1/usage/batch) to stay under the limit.",
    example: "this API key sends more than its rate limit allows; retry in 2 s",
  },
  idempotency_conflict: {
    means: "Another request with the same Idempotency-Key is being processed right now, or the ledger has recorded a different request under that key.",
    causes: ["a retry sent before the first attempt has answered", "two workers sharing a key generator that repeats"],
    action: "retry",
    todo: "Wait for the first request to answer, then retry with the same key to get its result; for a new request, use a new key.",
    example: 'another request with Idempotency-Key "payout-2026-11-29-op-7" is in progress; retry later',
  },
  idempotency_key_reused: {
    means: "This Idempotency-Key was already used, by this tenant, for a different request (another method, path or body). The first request's result stands.",
    causes: [
      "a key reused for a new request instead of generated afresh",
      "a retry whose body changed (a new timestamp, reordered fields in a hand-built body)",
    ],
    action: "fix_request",
    todo: "Use a new Idempotency-Key for a new request; to retry the original, send it again unchanged with the original key.",
    example: 'Idempotency-Key "3f1c0a52-5b1e-4d8e-9a43-5f0d3b4c2e11" was already used for a different request; use a new key for a new request',
  },
  unavailable: {
    means: "The service cannot reach its database (or write its audit log) right now, or is not ready yet. Nothing was written.",
    causes: ["a database restart or failover", "migrations not yet applied at start-up", "the database's connection limit reached"],
    action: "retry",
    todo: "Retry after the `Retry-After` seconds, with the same Idempotency-Key, backing off if it persists; the retry cannot apply the request twice.",
    example: "the database is unavailable; retry shortly with the same Idempotency-Key",
  },
  chain_unavailable: {
    means: "The RPC node of the chain this operation reads did not answer. Nothing was written.",
    causes: ["the chain's RPC provider is down or rate-limits the service", "a network problem between the service and the node"],
    action: "retry",
    todo: "Retry after the `Retry-After` seconds; if it persists, tell the operators of the service, whose chain settings name the node.",
    example: "the chain's RPC node did not answer; retry shortly",
  },
  internal: {
    means: "The service failed in a way it did not expect: a bug. The request's transaction was rolled back.",
    causes: ["a defect in the service"],
    action: "report",
    todo: "Report it to the service's operators, quoting the `request_id` (it finds the log line); retrying with the same Idempotency-Key is safe.",
    example: "an internal error occurred; quote request id 0193a5c2-7d41-7e6b-8f20-3c9d1e4b5a67 when reporting it",
  },
} satisfies ProblemExplanations;
