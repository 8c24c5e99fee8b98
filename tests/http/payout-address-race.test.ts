import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { registerOperator } from "../../src/services/marketplaces.js";
import { expectStatus, testApi, type TestApi } from "../support/http.js";
import { payoutWorld, type PayoutWorld } from "../support/payout-world.js";

/**
 * The first address on a chain has no row to lock, so two first addresses at once both saw none,
 * both answered 200, and the later upsert silently replaced the other: an operator onboarding while
 * a key an admin minted set its own address was told 200 for its wallet while it was paid to the
 * other, and the history held two first addresses. Changes of an operator's addresses are now
 * serialized on its row: the second is a change, which needs the first's agreement or a second key.
 */
let w: PayoutWorld | undefined;
let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  await w?.close();
  w = api = undefined;
});

describe("two first addresses at once", () => {
  it("only one of two concurrent first-address PUTs is set at once; the other must not be answered 200 and then lost", async () => {
    w = await payoutWorld();
    api = await testApi({ db: w.db, settlements: w.settlements });
    const t = api;
    const key = async (role: string, scope_id?: string, by?: string) =>
      expectStatus(await t.call("POST", "/v1/api-keys", { key: by, body: { name: role, role, scope_id } }), 201).body.secret as string;
    const mallory = await key("admin");
    const alice = await key("admin");
    let lost = 0;
    // A new operator each round: two first addresses sent at once, its own and a minted key's.
    for (let round = 0; round < 8 && lost === 0; round++) {
      const id = `op-${round}`;
      await registerOperator(w.db, { id, name: "GPU farm" });
      const op = await key("operator", id, alice);
      const minted = await key("operator", id, mallory);
      const challenge = async (k: string, acct: PrivateKeyAccount) => {
        const ch = expectStatus(
          await t.call("POST", `/v1/operators/${id}/payout-address-challenges`, { key: k, body: { chain_id: 31337, address: acct.address } }),
          201,
        ).body as { id: string; message: string };
        return { chain_id: 31337, address: acct.address, challenge_id: ch.id, signature: await acct.signMessage({ message: ch.message }) };
      };
      const wallet = privateKeyToAccount(generatePrivateKey());
      const thief = privateKeyToAccount(generatePrivateKey());
      const [bodyOp, bodyThief] = await Promise.all([challenge(op, wallet), challenge(minted, thief)]);
      const [rOp, rThief] = await Promise.all([
        t.call("PUT", `/v1/operators/${id}/payout-address`, { key: op, body: bodyOp }),
        t.call("PUT", `/v1/operators/${id}/payout-address`, { key: minted, body: bodyThief }),
      ]);
      const current = (await w.db.query<{ address: string }>("select address from payout_addresses where operator_id = $1", [id]))[0]!.address;
      const firsts = await w.db.query("select 1 from payout_address_events where operator_id = $1 and old_address is null", [id]);
      expect(firsts.length, "one first address in the history").toBe(1);
      // One is set, the other is a proposal; never two 200s with one of them lost.
      expect([rOp.status, rThief.status].sort()).toEqual([200, 202]);
      if (rOp.status === 200 && current !== wallet.address.toLowerCase()) lost++;
    }
    expect(lost, "the operator's 200 for its wallet, silently overwritten by the minted key's address").toBe(0);
  }, 120_000);
});
