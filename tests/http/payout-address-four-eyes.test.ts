import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, describe, expect, it } from "vitest";
import { relayAllEvents } from "../../src/services/events.js";
import { registerOperator } from "../../src/services/marketplaces.js";
import { expectRefused, expectStatus, testApi, type TestApi } from "../support/http.js";
import { payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";

/**
 * Where an operator is paid decides where its money goes, so one person may not change it alone:
 * an admin proving an address it controls, or a key it mints for the operator, only proposes.
 */
let w: PayoutWorld | undefined;
let api: TestApi | undefined;
let people: { mallory: string; alice: string } | undefined;
afterAll(async () => {
  await api?.close();
  await w?.close();
});

const mint = async (a: TestApi, role: string, scope_id?: string, by?: string) =>
  expectStatus(await a.call("POST", "/v1/api-keys", { key: by, body: { name: role, role, scope_id } }), 201).body.secret as string;

/** The operator of the test under way: one world for the file, a new operator for each test. */
let OP = "";
let n = 0;

async function setup() {
  if (!w) {
    w = await payoutWorld();
    api = await testApi({ db: w.db, settlements: w.settlements });
    // Two people: each has an admin key of their own (created by the bootstrap key).
    people = { mallory: await mint(api, "admin"), alice: await mint(api, "admin") };
  }
  const a = api!;
  const key = (role: string, scope_id?: string, by?: string) => mint(a, role, scope_id, by);
  OP = `op${++n}`;
  await registerOperator(w.db, { id: OP, name: "GPU farm" });
  const op = await key("operator", OP, people!.alice);
  return { w, api: a, key, ...people!, op };
}

async function challenge(api: TestApi, key: string, account: PrivateKeyAccount) {
  return expectStatus(
    await api.call("POST", `/v1/operators/${OP}/payout-address-challenges`, { key, body: { chain_id: 31337, address: account.address } }),
    201,
  ).body as { id: string; message: string };
}

/** PUT /v1/operators/{OP}/payout-address with `key`, proving `account` (and, given `current`, with its agreement). */
async function prove(api: TestApi, key: string, account: PrivateKeyAccount, current?: PrivateKeyAccount) {
  return put(api, key, account, await challenge(api, key, account), current);
}

async function put(api: TestApi, key: string, account: PrivateKeyAccount, ch: { id: string; message: string }, current?: PrivateKeyAccount) {
  const body: Record<string, unknown> = {
    chain_id: 31337,
    address: account.address,
    challenge_id: ch.id,
    signature: await account.signMessage({ message: ch.message }),
  };
  if (current) body.current_address_signature = await current.signMessage({ message: ch.message });
  return api.call("PUT", `/v1/operators/${OP}/payout-address`, { key, body });
}

const current = async (api: TestApi, key: string) =>
  expectStatus(await api.call("GET", `/v1/operators/${OP}/payout-addresses`, { key }), 200).body.data.map((a: { address: string }) => a.address);

const fresh = () => privateKeyToAccount(generatePrivateKey());

describe("who may decide where an operator is paid", () => {
  it("a new operator's own first address is set at once; a change agreed by the current address too", async () => {
    const { api, op } = await setup();
    const first = fresh();
    expect(expectStatus(await prove(api, op, first), 200).body).toMatchObject({ address: first.address.toLowerCase(), changed: true });
    const second = fresh();
    expect(expectStatus(await prove(api, op, second, first), 200).body).toMatchObject({ address: second.address.toLowerCase(), changed: true });
    expect(await current(api, op)).toEqual([second.address.toLowerCase()]);
  });

  it("an admin proving its own address for an operator only proposes: a key it created cannot approve, its payouts keep going to the operator's address", async () => {
    const { w, api, key, mallory, alice, op } = await setup();
    const wallet = fresh();
    expectStatus(await prove(api, op, wallet), 200);
    await w.credit(OP, TOKEN, 50_000_000n);
    const thief = fresh();
    const proposal = expectStatus(await prove(api, mallory, thief), 202).body;
    expect(proposal).toMatchObject({
      kind: "payout_address",
      status: "proposed",
      payload: { operator_id: OP, chain_id: "31337", old_address: wallet.address.toLowerCase(), new_address: thief.address.toLowerCase() },
    });
    expect(await current(api, op)).toEqual([wallet.address.toLowerCase()]);
    // A second admin key of the same person, and the bootstrap key, are not a second person.
    const mallory2 = await key("admin", undefined, mallory);
    for (const k of [mallory, mallory2, undefined]) {
      const res = await api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: k, body: {} });
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body.code).toBe("four_eyes");
    }
    // Paid meanwhile: to the operator's own address.
    const payout = expectStatus(await api.call("POST", "/v1/payouts", { key: mallory, body: { operator_id: OP, asset: TOKEN, amount: "1000000" } }), 201).body;
    expect(payout.to_address).toBe(wallet.address.toLowerCase());
    // Another person's key approves: the change takes effect, recorded as the proposer's.
    expectStatus(await api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: alice, body: {} }), 200);
    expect(await current(api, op)).toEqual([thief.address.toLowerCase()]);
    // The operator hears of every change of where it is paid (events and its webhooks); other operators do not.
    await relayAllEvents(api.db);
    const events = async (k: string) =>
      expectStatus(await api.call("GET", "/v1/events?type=payout_address.changed", { key: k }), 200).body.data as Array<Record<string, unknown>>;
    const mallorySecret = await key("admin");
    const mine = await events(op);
    expect(mine.map((e) => e.data)).toEqual([
      { operator_id: OP, chain_id: "31337", old_address: null, new_address: wallet.address.toLowerCase(), changed_by: expect.any(String) },
      {
        operator_id: OP,
        chain_id: "31337",
        old_address: wallet.address.toLowerCase(),
        new_address: thief.address.toLowerCase(),
        changed_by: expect.any(String),
      },
    ]);
    expect(mine[1]).toMatchObject({ operator_id: OP, resource_type: "payout_address", resource_id: `${OP}:31337` });
    await registerOperator(w.db, { id: `${OP}-other`, name: "other" });
    expect(await events(await key("operator", `${OP}-other`, mallorySecret))).toEqual([]);
  });

  it("an operator key an admin mints to change the address is no way around: the change is a proposal, and the minting admin cannot approve it", async () => {
    const { w, api, key, mallory, op } = await setup();
    const wallet = fresh();
    expectStatus(await prove(api, op, wallet), 200);
    await w.credit(OP, TOKEN, 50_000_000n);
    const minted = await key("operator", OP, mallory);
    const proposal = expectStatus(await prove(api, minted, fresh()), 202).body;
    const res = await api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: mallory, body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(res.body.code).toBe("four_eyes");
    expect(await current(api, op)).toEqual([wallet.address.toLowerCase()]);
  });

  it("a first address set while earnings wait, or by an admin, is a proposal too", async () => {
    const { w, api, key, mallory, alice, op } = await setup();
    // A third person: alice created the operator's key, so she is not independent of it.
    const carol = await key("admin");
    // By an admin, with nothing owed yet.
    expectStatus(await prove(api, mallory, fresh()), 202);
    // By the operator's own key once earnings wait.
    await w.credit(OP, TOKEN, 1n);
    const own = fresh();
    const proposal = expectStatus(await prove(api, op, own), 202).body;
    expect(proposal.payload.old_address).toBeNull();
    expect(await current(api, op)).toEqual([]);
    const refused = await api.call("POST", "/v1/payouts", { key: op, body: { asset: TOKEN, amount: "1" } });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    const res = await api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: alice, body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expectStatus(await api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: carol, body: {} }), 200);
    expect(await current(api, op)).toEqual([own.address.toLowerCase()]);
  });

  it("the operator reads the proposals about where it is paid, so it sees a change waiting for approval; other operators and marketplaces do not", async () => {
    const { w, api, key, mallory, alice, op } = await setup();
    expectStatus(await prove(api, op, fresh()), 200);
    await w.credit(OP, TOKEN, 5n);
    const proposal = expectStatus(await prove(api, mallory, fresh()), 202).body;
    const seen = expectStatus(await api.call("GET", `/v1/proposals/${proposal.id}`, { key: op }), 200).body;
    expect(seen).toMatchObject({ id: proposal.id, kind: "payout_address", status: "proposed", payload: { operator_id: OP } });
    const listed = expectStatus(await api.call("GET", "/v1/proposals?status=proposed", { key: op }), 200).body.data as Array<{
      id: string;
      payload: { operator_id: string };
    }>;
    expect(listed.map((p) => p.id)).toContain(proposal.id);
    expect(listed.every((p) => p.payload.operator_id === OP)).toBe(true);
    // Another operator and a marketplace: as if it did not exist, and not listed.
    await registerOperator(w.db, { id: `${OP}-x`, name: "other" });
    await api.call("POST", "/v1/marketplaces", { key: alice, body: { id: `${OP}-m`, name: "m" } });
    for (const other of [await key("operator", `${OP}-x`, alice), await key("marketplace", `${OP}-m`, alice)]) {
      const res = await api.call("GET", `/v1/proposals/${proposal.id}`, { key: other });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.body.code).toBe("proposal_not_found");
      const theirs = expectStatus(await api.call("GET", "/v1/proposals", { key: other }), 200).body.data as Array<{ id: string }>;
      expect(theirs.map((p) => p.id)).not.toContain(proposal.id);
    }
    // Rejected by another person: the operator sees the decision.
    expectStatus(await api.call("POST", `/v1/proposals/${proposal.id}/reject`, { key: alice, body: { reason: "not the operator's" } }), 200);
    expect(expectStatus(await api.call("GET", `/v1/proposals/${proposal.id}`, { key: op }), 200).body).toMatchObject({
      status: "rejected",
      reason: "not the operator's",
    });
  });

  it("a wrong current_address_signature is refused and writes nothing", async () => {
    const { api, op } = await setup();
    const wallet = fresh();
    expectStatus(await prove(api, op, wallet), 200);
    const next = fresh();
    const ch = await challenge(api, op, next);
    await expectRefused(api, () => put(api, op, next, ch, fresh()), 422, "signature_invalid", "current_address_signature");
    expect(await current(api, op)).toEqual([wallet.address.toLowerCase()]);
  });

  it("a proposal made against an address that changed since is outdated: approving it changes nothing", async () => {
    const { w, api, mallory, alice, op } = await setup();
    const wallet = fresh();
    expectStatus(await prove(api, op, wallet), 200);
    await w.credit(OP, TOKEN, 5n);
    const stale = expectStatus(await prove(api, mallory, fresh()), 202).body;
    const next = fresh();
    expectStatus(await prove(api, op, next, wallet), 200);
    const res = await api.call("POST", `/v1/proposals/${stale.id}/approve`, { key: alice, body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.code).toBe("proposal_outdated");
    expect(await current(api, op)).toEqual([next.address.toLowerCase()]);
  });

  it("a proposal made against an address the operator left and came back to is outdated too", async () => {
    const { w, api, mallory, alice, op } = await setup();
    const wallet = fresh();
    expectStatus(await prove(api, op, wallet), 200);
    await w.credit(OP, TOKEN, 5n);
    const stale = expectStatus(await prove(api, mallory, fresh()), 202).body;
    // The operator moves away from its wallet (with the wallet's agreement), and later back.
    const next = fresh();
    expectStatus(await prove(api, op, next, wallet), 200);
    expectStatus(await prove(api, op, wallet, next), 200);
    const res = await api.call("POST", `/v1/proposals/${stale.id}/approve`, { key: alice, body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.code).toBe("proposal_outdated");
    expect(await current(api, op)).toEqual([wallet.address.toLowerCase()]);
  });
});
