import type { Context } from "hono";
import { canonicalSha256 } from "../domain/canonical.js";
import { batchTuning, giveWay } from "../give-way.js";
import type { Database, Queryable } from "../services/context.js";
import { findStoredResponse, recordAudit, rememberWrite, type IdempotencyKeyRef, type WriteReceipt } from "../services/response-store.js";
import type { AuditEntry } from "../services/audit-log.js";
import { tenantOf } from "../domain/access.js";
import { auditEntryOf } from "./audit-entry.js";
import type { AppEnv } from "./request-context.js";
import { ApiError } from "./problem.js";
import { holdKeys } from "../services/response-store.js";

/**
 * One protocol for every write (POST, PUT): the `Idempotency-Key` header names the request per
 * tenant, with a hash of the request (method, path, body).
 *
 *  1. A stored answer for the key is replayed (header `Idempotent-Replayed: true`); a different
 *     request with the same key gets 409.
 *  2. Otherwise the write runs, and its change commits in one transaction with the request's
 *     receipt: its audit row and its answer remembered for the key. Concurrent requests' changes
 *     share a transaction where they are group-committed (usage records, transfers).
 *  3. A write that changed nothing (a refusal, a repeat the ledger answered from its own keys) has
 *     no receipt: it is audited on its own (middleware/audit.ts); refusals are not remembered, so a
 *     retry is evaluated afresh.
 *
 * Two runners implement it: `idempotently` for writes that run in a transaction of their own, and
 * `replayOrRun` for ledger writes, whose transaction is the ledger batch's (they take a receipt and
 * a ledger idempotency key derived from the header key, so that a retry after a crash is still
 * written once).
 */
export type IdempotentRequest = IdempotencyKeyRef;

const KEY = /^[\x21-\x7e]{1,255}$/;

export async function idempotentRequest(c: Context<AppEnv>, body: unknown): Promise<IdempotentRequest> {
  const key = c.req.header("idempotency-key");
  if (key === undefined)
    throw new ApiError(
      "idempotency_key_required",
      `${c.req.method} requests need an 'Idempotency-Key' header (any unique string of up to 255 printable ASCII characters without spaces, e.g. a UUID)`,
    );
  if (!KEY.test(key))
    throw new ApiError("invalid_request", "the Idempotency-Key header must be 1-255 printable ASCII characters without spaces", [
      { path: "Idempotency-Key", message: "invalid" },
    ]);
  const method = c.req.method;
  const path = c.req.path;
  return { scope: tenantOf(c.get("principal")), key, method, path, hash: await canonicalSha256({ method, path, body }, giveWay, batchTuning.yieldEvery) };
}

/**
 * The stored response for this request, or undefined; throws 409 when the key was used for another
 * request. Outside a transaction, concurrent requests' lookups share one query (ReadBatcher).
 */
export async function storedResponse(db: Queryable, req: IdempotentRequest, options: { shared?: boolean } = {}): Promise<Response | undefined> {
  const seen = await findStoredResponse(db, req, options);
  if (!seen) return undefined;
  if (seen.request_hash !== req.hash) {
    throw new ApiError("idempotency_key_reused", `Idempotency-Key "${req.key}" was already used for a different request; use a new key for a new request`);
  }
  return new Response(JSON.stringify(seen.body), {
    status: seen.status,
    headers: { "content-type": "application/json", "idempotent-replayed": "true" },
  });
}

class Raced extends Error {}

type Success = 200 | 201 | 202;

/**
 * Runs a write and, in its transaction, remembers its answer and writes its audit row. If a
 * concurrent request with the same key committed first, the write is rolled back and the stored
 * answer replayed. `stored` lets a response keep a secret out of the database (e.g. a new API
 * key's secret). The caller's API key is held against revocation first, unless the write holds it
 * itself (`keyHeldByWrite`: a revocation).
 */
export async function idempotently(
  c: Context<AppEnv>,
  body: unknown,
  write: (tx: Queryable) => Promise<{ status: Success; body: unknown; stored?: unknown }>,
  options: { keyHeldByWrite?: boolean } = {},
): Promise<Response> {
  const audit = await auditEntryOf(c, 0);
  const db: Database = c.get("deps").ledger.db;
  if ((c.req.method === "PUT" || c.req.method === "DELETE") && c.req.header("idempotency-key") === undefined) return unkeyedPut(c, db, audit, write);
  const req = await idempotentRequest(c, body);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        const replay = await storedResponse(tx, req);
        if (replay) return replay;
        // Held before the write, so that a key may revoke itself (src/db/queries/key-guard.ts);
        // a revocation holds it itself, with the revoked key's lock, in the order of their ids.
        if (!options.keyHeldByWrite) await holdKeys(tx, [audit.keyId]);
        const out = await write(tx);
        if (!(await rememberWrite(tx, req, out.status, out.stored ?? out.body, { ...audit, status: out.status }, db.clock.now()))) throw new Raced();
        c.set("audited", true);
        return c.json(out.body as object, out.status);
      });
    } catch (err) {
      if (!(err instanceof Raced)) throw err;
    }
  }
  throw new ApiError("idempotency_conflict", `another request with Idempotency-Key "${req.key}" is in progress; retry later`);
}

/**
 * A PUT or DELETE without an Idempotency-Key (they state what should be; the key is optional there): the
 * write and its audit row in one transaction, nothing remembered.
 */
async function unkeyedPut(
  c: Context<AppEnv>,
  db: Database,
  audit: AuditEntry,
  write: (tx: Queryable) => Promise<{ status: Success; body: unknown }>,
): Promise<Response> {
  return db.transaction(async (tx) => {
    await holdKeys(tx, [audit.keyId]);
    const out = await write(tx);
    await recordAudit(tx, { ...audit, status: out.status }, db.clock.now());
    c.set("audited", true);
    return c.json(out.body as object, out.status);
  });
}

/** The receipts a ledger write may take into its transaction (see db/queries/write-receipts.ts). */
export interface Receipts {
  /** The audit row and the answer, made from the change's result in its transaction. */
  answered<R>(status: Success, body: (result: R) => unknown): WriteReceipt<R>;
  /** The audit row only: the answer is remembered once the change committed (a receipt for a change of any result). */
  audited<R = void>(status: Success): WriteReceipt<R>;
}

/**
 * What a ledger write answers, and which receipt its transaction wrote: `answer` (the audit row and
 * the answer), `audit` (the audit row; the answer is remembered now), or none (it changed nothing,
 * e.g. the ledger replayed an earlier write: the answer is remembered now and the call audited on
 * its own). `remember: false` keeps an answer from being remembered (a batch with refused items).
 */
export interface LedgerWriteOutcome {
  status: Success;
  body: unknown;
  remember?: boolean;
  receipt?: "answer" | "audit";
}

/**
 * For writes that keep their own idempotency in the ledger (transfers, usage, holds, payouts,
 * deposits, decisions): answer a retry from the stored response, or run the write with its
 * receipts and a ledger key. `ledgerKey` gives the write a ledger idempotency key derived from the
 * tenant and the header key, so a retry after a crash between commit and answer is written once.
 */
export async function replayOrRun(
  c: Context<AppEnv>,
  body: unknown,
  write: (ledgerKey: (prefix: string) => string, receipts: Receipts) => Promise<LedgerWriteOutcome>,
): Promise<Response> {
  const req = await idempotentRequest(c, body);
  const db = c.get("deps").ledger.db;
  const replay = await storedResponse(db, req, { shared: true });
  if (replay) return replay;
  const receipts = receiptsFor(req, await auditEntryOf(c, 0));
  // Length-prefixed parts, so that no tenant and header key can spell another's ledger key.
  const out = await write((prefix) => `${prefix}:${req.scope.length}:${req.scope}:${req.key.length}:${req.key}`, receipts);
  if (out.receipt) c.set("audited", true);
  // A batch answer with refused items is not remembered, like any refusal: a retry re-evaluates
  // them (items already written then answer as duplicates / replays).
  if (out.receipt !== "answer" && out.remember !== false) {
    await c.get("deps").ledger.responses.submit({ ...req, status: out.status, body: JSON.stringify(out.body) });
  }
  return c.json(out.body as object, out.status);
}

function receiptsFor(request: IdempotentRequest, audit: AuditEntry): Receipts {
  return {
    answered: (status, body) => ({ audit: { ...audit, status }, answer: { request, body: body as (result: unknown) => unknown } }),
    audited: (status) => ({ audit: { ...audit, status } }),
  };
}
