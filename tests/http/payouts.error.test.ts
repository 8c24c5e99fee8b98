import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clearOfMidnight } from "../support/clock.js";
import { expectRefused, expectStatus, offlineSettlements, testApi, world, type TestApi, proposeAndApprove, fourEyes } from "../support/http.js";
import type { World } from "../support/security.js";

let api: TestApi;
let w: World;
beforeAll(async () => {
  api = await testApi({ settlements: offlineSettlements() });
  w = await world(api);
  expectStatus(
    await api.call("POST", "/v1/assets", {
      body: { code: "TUSD", scale: 6, settlement: { kind: "erc20", chain_id: 31337, token_address: `0x${"44".repeat(20)}` } },
    }),
    201,
  );
  expectStatus(
    await api.call("POST", "/v1/assets", {
      body: { code: "MAINUSD", scale: 6, settlement: { kind: "erc20", chain_id: 1, token_address: `0x${"55".repeat(20)}` } },
    }),
    201,
  );
});
afterAll(async () => api.close());

const challenge = async (address: string, operator = "o1", key = w.keys.o1) =>
  expectStatus(await api.call("POST", `/v1/operators/${operator}/payout-address-challenges`, { key, body: { chain_id: 31337, address } }), 201).body;

describe("payout requests that are refused, with nothing written", () => {
  it("amounts: above the available balance, zero, negative, decimals, numbers, oversized", async () => {
    const post = (amount: unknown) => () => api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "USDC", amount } });
    await expectRefused(api, post("999999999999"), 422, "exceeds_credits", "amount");
    for (const bad of ["0", "-5", "1.5", "1e3", 100, "", (1n << 256n).toString()]) await expectRefused(api, post(bad), 400, "invalid_request", "amount");
  });

  it("the policy minimum", async () => {
    await proposeAndApprove(api, "PUT", "/v1/payout-policies/USDC", { min_amount: "1000", schedule: "manual" });
    try {
      const res = await expectRefused(
        api,
        () => api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "USDC", amount: "999" } }),
        422,
        "payout_below_minimum",
        "amount",
      );
      expect(res.body.detail).toMatch(/1000/);
    } finally {
      await proposeAndApprove(api, "PUT", "/v1/payout-policies/USDC", { min_amount: "1", schedule: "manual" });
    }
  });

  it("caps per payout and per day (UTC) set by the platform: beyond them refused, naming what is left", async () => {
    await clearOfMidnight();
    const policy = (extra: Record<string, unknown>) => api.call("PUT", "/v1/payout-policies/USDC", { body: { min_amount: "1", schedule: "manual", ...extra } });
    const setPolicy = (extra: Record<string, unknown>) =>
      proposeAndApprove(api, "PUT", "/v1/payout-policies/USDC", { min_amount: "1", schedule: "manual", ...extra });
    await expectRefused(api, () => policy({ min_amount: "1000", max_per_payout: "999" }), 400, "invalid_request", "max_per_payout");
    await setPolicy({ max_per_payout: "1000000", max_per_day: "1500000" });
    const usdc = expectStatus(await api.call("GET", "/v1/payout-policies"), 200).body.data.find((p: { asset: string }) => p.asset === "USDC");
    expect(usdc).toMatchObject({ max_per_payout: "1000000", max_per_day: "1500000" });
    const made: string[] = [];
    const pay = (amount: string) => api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "USDC", amount } });
    try {
      const over = await expectRefused(api, () => pay("1000001"), 422, "payout_limit_exceeded", "amount");
      expect(over.body.detail).toMatch(/largest payout of USDC is 1000000/);
      made.push(expectStatus(await pay("1000000"), 201).body.id);
      const day = await expectRefused(api, () => pay("600000"), 422, "payout_limit_exceeded", "amount");
      expect(day.body.detail).toMatch(/at most 1500000 USDC a day .* 500000 is left today/);
      const half = expectStatus(await pay("500000"), 201).body.id;
      made.push(half);
      await expectRefused(api, () => pay("1"), 422, "payout_limit_exceeded", "amount");
      // A payout that did not happen does not count.
      expectStatus(await api.call("POST", `/v1/payouts/${half}/cancel`, { key: w.keys.finance, body: {} }), 200);
      made.push(expectStatus(await pay("400000"), 201).body.id);
    } finally {
      for (const id of made) await api.call("POST", `/v1/payouts/${id}/cancel`, { key: w.keys.finance, body: {} });
      await setPolicy({});
    }
  });

  it("a policy change is a proposal: one admin's change does nothing until an independent key approves it", async () => {
    const { proposer, approver } = await fourEyes(api);
    // An admin alone tries to lift every cap and the approval threshold.
    const proposal = expectStatus(
      await api.call("PUT", "/v1/payout-policies/USDC", { key: proposer, body: { min_amount: "1", schedule: "manual", max_per_payout: "1" } }),
      202,
    ).body;
    expect(proposal).toMatchObject({ kind: "payout_policy", status: "proposed", payload: { asset: "USDC", max_per_payout: "1" } });
    const before = expectStatus(await api.call("GET", "/v1/payout-policies"), 200).body.data.find((p: { asset: string }) => p.asset === "USDC");
    expect(before.max_per_payout).toBeNull();
    await expectRefused(api, () => api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: proposer, body: {} }), 403, "four_eyes");
    await expectRefused(api, () => api.call("POST", `/v1/proposals/${proposal.id}/approve`, { body: {} }), 403, "four_eyes");
    await expectRefused(api, () => api.call("POST", `/v1/proposals/${proposal.id}/approve`, { key: w.keys.o1, body: {} }), 403, "forbidden");
    // Asked again, the same change answers the open proposal.
    expect(
      expectStatus(
        await api.call("PUT", "/v1/payout-policies/USDC", { key: proposer, body: { min_amount: "1", schedule: "manual", max_per_payout: "1" } }),
        202,
      ).body.id,
    ).toBe(proposal.id);
    expectStatus(await api.call("POST", `/v1/proposals/${proposal.id}/reject`, { key: approver, body: { reason: "no" } }), 200);
    const after = expectStatus(await api.call("GET", "/v1/payout-policies"), 200).body.data.find((p: { asset: string }) => p.asset === "USDC");
    expect(after.max_per_payout).toBeNull();
  });

  it("an operator's own caps: the lower of its caps and the policy's applies, set only through an approved proposal", async () => {
    await clearOfMidnight();
    const pay = (amount: string) => api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "USDC", amount } });
    const path = "/v1/operators/o1/payout-limits/USDC";
    // Not by the operator itself, nor by a marketplace; nothing changes while the proposal is open.
    await expectRefused(api, () => api.call("PUT", path, { key: w.keys.o1, body: { max_per_payout: "1000000000", max_per_day: null } }), 403, "forbidden");
    await expectRefused(api, () => api.call("PUT", path, { key: w.keys.m1, body: { max_per_payout: "1000000000", max_per_day: null } }), 403, "forbidden");
    await expectRefused(api, () => api.call("PUT", path, { body: { max_per_payout: "0", max_per_day: null } }), 400, "invalid_request", "max_per_payout");
    await expectRefused(api, () => api.call("PUT", path, { body: { max_per_payout: "5" } }), 400, "invalid_request", "max_per_day");
    await expectRefused(
      api,
      () => api.call("PUT", "/v1/operators/nobody/payout-limits/USDC", { body: { max_per_payout: "5", max_per_day: null } }),
      404,
      "operator_not_found",
    );
    const open = expectStatus(await api.call("PUT", path, { key: w.keys.finance, body: { max_per_payout: "300000", max_per_day: "500000" } }), 202).body;
    const made: string[] = [];
    try {
      made.push(expectStatus(await pay("400000"), 201).body.id); // not in force yet
      await proposeAndApprove(api, "PUT", path, { max_per_payout: "300000", max_per_day: "500000" });
      // The operator sees its caps in force.
      expect(expectStatus(await api.call("GET", path, { key: w.keys.o1 }), 200).body).toMatchObject({
        operator_id: "o1",
        asset: "USDC",
        max_per_payout: "300000",
        max_per_day: "500000",
        own: { max_per_payout: "300000", max_per_day: "500000" },
        policy: { max_per_payout: null },
      });
      const over = await expectRefused(api, () => pay("300001"), 422, "payout_limit_exceeded", "amount");
      expect(over.body.detail).toMatch(/largest payout of USDC is 300000 .*operator o1's own max_per_payout/);
      // 400000 asked for today already: 100000 left of the operator's 500000 a day.
      const day = await expectRefused(api, () => pay("200000"), 422, "payout_limit_exceeded", "amount");
      expect(day.body.detail).toMatch(/at most 500000 USDC a day \(operator o1's own max_per_day\); 100000 is left today/);
      made.push(expectStatus(await pay("100000"), 201).body.id);
      // The policy's cap, when lower, wins.
      await proposeAndApprove(api, "PUT", "/v1/payout-policies/USDC", { min_amount: "1", schedule: "manual", max_per_payout: "1000" });
      const policyCap = await expectRefused(api, () => pay("1001"), 422, "payout_limit_exceeded", "amount");
      expect(policyCap.body.detail).toMatch(/largest payout of USDC is 1000 .*the payout policy's max_per_payout/);
    } finally {
      for (const id of made) await api.call("POST", `/v1/payouts/${id}/cancel`, { key: w.keys.finance, body: {} });
      await proposeAndApprove(api, "PUT", "/v1/payout-policies/USDC", { min_amount: "1", schedule: "manual" });
      await proposeAndApprove(api, "PUT", path, { max_per_payout: null, max_per_day: null });
      expect(open.status).toBe("proposed");
    }
  });

  it("unknown asset, unknown or other operator, unknown fields, missing operator for finance", async () => {
    await expectRefused(api, () => api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "NOPE", amount: "1" } }), 404, "asset_not_found", "asset");
    await expectRefused(
      api,
      () => api.call("POST", "/v1/payouts", { key: w.keys.o2, body: { operator_id: "o1", asset: "USDC", amount: "1" } }),
      404,
      "operator_not_found",
    );
    await expectRefused(
      api,
      () => api.call("POST", "/v1/payouts", { key: w.keys.finance, body: { operator_id: "ghost", asset: "USDC", amount: "1" } }),
      404,
      "operator_not_found",
    );
    await expectRefused(
      api,
      () => api.call("POST", "/v1/payouts", { key: w.keys.finance, body: { asset: "USDC", amount: "1" } }),
      400,
      "invalid_request",
      "operator_id",
    );
    await expectRefused(
      api,
      () => api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "USDC", amount: "1", to_address: "0x00" } }),
      400,
      "invalid_request",
    );
    await expectRefused(
      api,
      () => api.call("POST", "/v1/payouts", { key: w.keys.m1, body: { operator_id: "o1", asset: "USDC", amount: "1" } }),
      403,
      "forbidden",
    );
  });

  it("an on-chain asset without a verified address, and an asset on a chain the service does not pay on", async () => {
    await expectRefused(api, () => api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "TUSD", amount: "1" } }), 422, "payout_address_missing");
    await expectRefused(api, () => api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "MAINUSD", amount: "1" } }), 422, "chain_not_configured");
  });

  it("cancel and mark-paid only apply to pending payouts; mark-paid only to off-chain ones", async () => {
    const p = expectStatus(await api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "USDC", amount: "3" } }), 201).body;
    expectStatus(await api.call("POST", `/v1/payouts/${p.id}/mark-paid`, { key: w.keys.finance, body: { reference: "wire-9" } }), 200);
    await expectRefused(api, () => api.call("POST", `/v1/payouts/${p.id}/cancel`, { key: w.keys.o1 }), 409, "payout_not_pending");
    await expectRefused(
      api,
      () => api.call("POST", `/v1/payouts/${p.id}/mark-paid`, { key: w.keys.finance, body: { reference: "another" } }),
      409,
      "payout_not_pending",
    );
    await expectRefused(api, () => api.call("POST", `/v1/payouts/${p.id}/mark-paid`, { key: w.keys.o1, body: { reference: "x" } }), 403, "forbidden");
    await expectRefused(
      api,
      () => api.call("POST", "/v1/payouts/01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e/cancel", { key: w.keys.finance }),
      404,
      "payout_not_found",
    );
    await expectRefused(api, () => api.call("GET", "/v1/payouts/not-a-uuid", { key: w.keys.finance }), 400, "invalid_request");
  });

  it("a payout's hold cannot be voided, posted or reversed through the transfer routes", async () => {
    const p = expectStatus(await api.call("POST", "/v1/payouts", { key: w.keys.o1, body: { asset: "USDC", amount: "2" } }), 201).body;
    for (const action of ["void", "post"]) {
      const res = await expectRefused(api, () => api.call("POST", `/v1/transfers/${p.hold_transfer_id}/${action}`, { body: {} }), 400, "invalid_request");
      expect(res.body.detail).toMatch(/belongs to a payout/);
    }
    const paid = expectStatus(await api.call("POST", `/v1/payouts/${p.id}/mark-paid`, { key: w.keys.finance, body: { reference: "wire-h" } }), 200).body;
    await expectRefused(api, () => api.call("POST", `/v1/transfers/${paid.settle_transfer_id}/reverse`, { body: {} }), 400, "invalid_request");
  });

  it("list filters are checked", async () => {
    await expectRefused(api, () => api.call("GET", "/v1/payouts?status=lost"), 400, "invalid_request", "status");
    await expectRefused(api, () => api.call("GET", "/v1/payouts?chain_id=-1"), 400, "invalid_request", "chain_id");
    await expectRefused(api, () => api.call("GET", "/v1/payouts?asset=NOPE"), 404, "asset_not_found");
    await expectRefused(api, () => api.call("GET", "/v1/payouts?cursor=zzz"), 400, "invalid_request", "cursor");
    // Another operator's payouts simply are not there.
    expect(expectStatus(await api.call("GET", "/v1/payouts?operator_id=o1", { key: w.keys.o2 }), 200).body.data).toEqual([]);
  });

  it("policies: interval without seconds, unknown asset, bad caps", async () => {
    await expectRefused(
      api,
      () => api.call("PUT", "/v1/payout-policies/USDC", { body: { min_amount: "1", schedule: "interval" } }),
      400,
      "invalid_request",
      "interval_seconds",
    );
    await expectRefused(
      api,
      () => api.call("PUT", "/v1/payout-policies/USDC", { body: { min_amount: "1", schedule: "manual", interval_seconds: 3600 } }),
      400,
      "invalid_request",
      "interval_seconds",
    );
    await expectRefused(api, () => api.call("PUT", "/v1/payout-policies/NOPE", { body: { min_amount: "1", schedule: "manual" } }), 404, "asset_not_found");
    await expectRefused(
      api,
      () => api.call("PUT", "/v1/payout-policies/USDC", { body: { min_amount: "1", schedule: "manual", max_gas_share_bps: 10_001 } }),
      400,
      "invalid_request",
      "max_gas_share_bps",
    );
  });
});

describe("payout address proofs that are refused", () => {
  it("a signature by another key, of another message, or malformed", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const thief = privateKeyToAccount(generatePrivateKey());
    const ch = await challenge(owner.address);
    const put = (body: Record<string, unknown>) => () =>
      api.call("PUT", "/v1/operators/o1/payout-address", { key: w.keys.o1, body: { chain_id: 31337, address: owner.address, challenge_id: ch.id, ...body } });
    await expectRefused(api, put({ signature: await thief.signMessage({ message: ch.message }) }), 422, "signature_invalid", "signature");
    await expectRefused(api, put({ signature: await owner.signMessage({ message: "something else" }) }), 422, "signature_invalid", "signature");
    await expectRefused(api, put({ signature: "0x1234" }), 400, "invalid_request", "signature");
    // The right signature for another address than the challenge's.
    await expectRefused(api, put({ address: thief.address, signature: await thief.signMessage({ message: ch.message }) }), 422, "challenge_invalid");
    // Then the right one is taken, once (as a proposal: earnings wait for o1, so its first address
    // needs a second key, tests/http/payout-address-four-eyes.test.ts); reusing the challenge for another address is refused.
    expect(expectStatus(await put({ signature: await owner.signMessage({ message: ch.message }) })(), 202).body.kind).toBe("payout_address");
    await expectRefused(
      api,
      () =>
        api.call("PUT", "/v1/operators/o1/payout-address", {
          key: w.keys.o1,
          body: { chain_id: 31337, address: thief.address, challenge_id: ch.id, signature: `0x${"11".repeat(65)}` },
        }),
      422,
      "challenge_invalid",
    );
  });

  it("an expired challenge, another operator's challenge, an unconfigured chain, a bad address", async () => {
    const a = privateKeyToAccount(generatePrivateKey());
    const ch = await challenge(a.address);
    await api.db.query("update payout_address_challenges set expires_at = now() - interval '1 second' where id = $1", [ch.id]);
    const sig = await a.signMessage({ message: ch.message });
    await expectRefused(
      api,
      () =>
        api.call("PUT", "/v1/operators/o1/payout-address", {
          key: w.keys.o1,
          body: { chain_id: 31337, address: a.address, challenge_id: ch.id, signature: sig },
        }),
      422,
      "challenge_invalid",
    );
    const ch2 = await challenge(a.address, "o2", w.keys.o2);
    const sig2 = await a.signMessage({ message: ch2.message });
    await expectRefused(
      api,
      () =>
        api.call("PUT", "/v1/operators/o1/payout-address", {
          key: w.keys.o1,
          body: { chain_id: 31337, address: a.address, challenge_id: ch2.id, signature: sig2 },
        }),
      404,
      "challenge_not_found",
    );
    await expectRefused(
      api,
      () => api.call("POST", "/v1/operators/o1/payout-address-challenges", { key: w.keys.o1, body: { chain_id: 1, address: a.address } }),
      422,
      "chain_not_configured",
    );
    await expectRefused(
      api,
      () => api.call("POST", "/v1/operators/o1/payout-address-challenges", { key: w.keys.o1, body: { chain_id: 31337, address: "0x123" } }),
      400,
      "invalid_request",
      "address",
    );
    await expectRefused(
      api,
      () => api.call("POST", "/v1/operators/o1/payout-address-challenges", { key: w.keys.o2, body: { chain_id: 31337, address: a.address } }),
      404,
      "operator_not_found",
    );
  });
});
