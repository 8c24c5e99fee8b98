import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectStatus, testApi, world, writeJournal, type TestApi } from "../support/http.js";

/**
 * Four eyes: the approver's key may not descend from the proposer's, nor the proposer's from the
 * approver's, however many keys lie between them. A walk of the keys' creators limited to 64 steps
 * let a proposer mint a chain of 65 admin keys and approve its own receipt with the last: money
 * "received" on one person's word.
 */
let api: TestApi;
let w: Awaited<ReturnType<typeof world>>;
beforeAll(async () => {
  api = await testApi();
  w = await world(api);
});
afterAll(() => api.close());

describe("four eyes through a deep chain of keys", () => {
  it("a key 65 generations below the proposer's cannot approve its receipt", async () => {
    const admin = w.keys.admin;
    const proposal = expectStatus(
      await api.call("POST", "/v1/marketplaces/m1/receipts", {
        key: admin,
        body: { asset: "USDC", amount: "5000000000", reference: "wire that never came", customer_id: "c1" },
      }),
      201,
    ).body;
    // The same admin mints admin keys, each with the one before.
    let current = admin;
    for (let i = 0; i < 65; i++) {
      current = expectStatus(await api.call("POST", "/v1/api-keys", { key: current, body: { name: `chain ${i}`, role: "admin" } }), 201).body.secret as string;
    }
    const journal = await writeJournal(api.db, ["audit_log INSERT"]);
    const mark = await journal.mark();
    const approved = await api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: current, body: {} });
    expect(approved.body).toMatchObject({ status: 403, code: "four_eyes" });
    expect(await journal.since(mark)).toEqual([]);
    expect(await api.db.query("select 1 from funds_receipts where proposal_id = $1", [proposal.id])).toEqual([]);
  });

  it("nor may the proposer's key sit 65 generations below the approver's (the same walk, the other way)", async () => {
    const approver = w.keys.admin;
    let current = approver;
    for (let i = 0; i < 65; i++) {
      current = expectStatus(await api.call("POST", "/v1/api-keys", { key: current, body: { name: `down ${i}`, role: "admin" } }), 201).body.secret as string;
    }
    const limit = expectStatus(
      await api.call("POST", "/v1/marketplaces/m2/credit-limits", { key: current, body: { asset: "USDC", credit_limit: "1000000000000" } }),
      201,
    ).body;
    const approved = await api.call("POST", `/v1/proposals/${limit.id}/approve`, { key: approver, body: {} });
    expect(approved.body).toMatchObject({ status: 403, code: "four_eyes" });
  });
});
