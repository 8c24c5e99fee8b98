import { expect, it } from "vitest";
import { worldPerFile, writeJournal } from "../support/http.js";

/** A refused request writes nothing: the first payout request of a database, refused 422, made the deployment row before (it is now made when the service starts). */
const t = worldPerFile();
it("a payout refused for insufficient funds writes no row", async () => {
  const j = await writeJournal(t.api.db, ["audit_log INSERT"]);
  const mark = await j.mark();
  const res = await t.api.call("POST", "/v1/payouts", { key: t.w.keys.o1, body: { asset: "USDC", amount: "9".repeat(70) } });
  expect(res.status).toBe(422);
  expect(res.body.code).toBe("exceeds_credits");
  expect(await j.since(mark)).toEqual([]);
});
