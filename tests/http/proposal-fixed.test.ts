import { describe, expect, it } from "vitest";
import { expectStatus, worldPerFile } from "../support/http.js";

/**
 * An approval is of what the approver was shown: the proposal's id names what it asks, and the
 * database keeps that from changing between the page the approver read and the click. Who proposed
 * it, its kind, marketplace and payload cannot be edited; a decision is made once and stays; a
 * proposal is never deleted.
 */
const t = worldPerFile();

describe("a proposal cannot change under its approver", () => {
  it("refuses an edit of what a proposal asks or who asked it, a second decision, and a deletion; the decision itself is recorded", async () => {
    const { api, w } = t;
    const proposal = expectStatus(
      await api.call("POST", "/v1/marketplaces/m1/receipts", {
        key: w.keys.finance,
        body: { asset: "USDC", amount: "1000", reference: "WIRE-FIXED-1", customer_id: "c1" },
      }),
      201,
    ).body;
    // The payee swapped, the amount raised, the proposer made someone else's, after the approver looked.
    for (const [column, value] of [
      ["payload", JSON.stringify({ ...proposal.payload, customer_id: "m1only", amount: "900000000" })],
      ["kind", "credit_limit"],
      ["marketplace_id", "m2"],
      ["proposed_by", "someone-else"],
      ["proposed_at", "2020-01-01T00:00:00Z"],
    ]) {
      await expect(api.db.query(`update proposals set ${column} = $2 where id = $1`, [proposal.id, value]), column).rejects.toThrow(/cannot change/);
    }
    await expect(api.db.query("delete from proposals where id = $1", [proposal.id])).rejects.toThrow(/cannot be deleted/);

    const approved = expectStatus(await api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: w.keys.admin, body: {} }), 200).body;
    expect(approved).toMatchObject({ status: "approved", payload: proposal.payload });
    // Decided once: not reopened, not turned into a rejection, its result not rewritten.
    for (const [column, value] of [
      ["status", "rejected"],
      ["reason", "rewritten"],
      ["result", JSON.stringify({ nothing: true })],
    ]) {
      await expect(api.db.query(`update proposals set ${column} = $2 where id = $1`, [proposal.id, value]), column).rejects.toThrow(/cannot change/);
    }
    await expect(api.db.query("update proposals set status = 'proposed', decided_by = null, decided_at = null where id = $1", [proposal.id])).rejects.toThrow(
      /cannot change/,
    );
    const [row] = await api.db.query<{ status: string; payload: Record<string, unknown> }>("select status, payload from proposals where id = $1", [
      proposal.id,
    ]);
    expect(row).toMatchObject({ status: "approved", payload: proposal.payload });
  });
});
