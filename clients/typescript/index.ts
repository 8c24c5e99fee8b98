/**
 * A typed client of the ledger's HTTP API: openapi-fetch on the types that openapi-typescript
 * generates from the service's own OpenAPI document (schema.ts, `npm run client:generate`). A path,
 * parameter, body or answer field the routes do not have fails to compile, and CI fails when
 * schema.ts is older than the routes (`npm run client:check`).
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths };

/**
 * The answers the client types: JSON, and problem+json for errors. A report asked for as CSV
 * (`format: "csv"`) is read with `parseAs: "text"`.
 */
export type LedgerMediaType = "application/json" | "application/problem+json";

/** The client: `GET`, `POST`, `PUT`, … named by the document's paths; each answers `{ data, error, response }`. */
export type LedgerClient = Client<paths, LedgerMediaType>;

/** An error answer (RFC 9457 problem+json): branch on `code`; `detail` is for people. */
export type Problem = components["schemas"]["Problem"];

export interface LedgerClientOptions {
  /** The service's origin, such as `http://127.0.0.1:8080` (the paths carry `/v1`). */
  baseUrl: string;
  /** The API key, sent as `Authorization: Bearer <key>` on every request. */
  apiKey: string;
  /** Another fetch (an in-process app in tests, a proxy); `globalThis.fetch` by default. */
  fetch?: (request: Request) => Promise<Response>;
}

export function createLedgerClient({ baseUrl, apiKey, fetch }: LedgerClientOptions): LedgerClient {
  return createClient<paths, LedgerMediaType>({ baseUrl, fetch, headers: { authorization: `Bearer ${apiKey}` } });
}

/**
 * The `Idempotency-Key` header every POST needs (a random UUID when no key is given), for a request's
 * `params.header`: `client.POST("/v1/usage", { params: { header: idempotencyKey("job-1") }, body })`.
 * A retry with the same key and request replays the first answer (docs/api.md, "Idempotency").
 */
export function idempotencyKey(key: string = crypto.randomUUID()): { "idempotency-key": string } {
  return { "idempotency-key": key };
}
