import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getUsage } from "../../src/db/queries/usage.js";
import { authenticate } from "../../src/services/api-keys.js";
import { proposePayoutAddress } from "../../src/services/proposals/propose-payout-address.js";
import { proposeUsageReversal } from "../../src/services/proposals.js";
import { recordProposal } from "../../src/services/proposals/proposal.js";
import { cookieHeader, signIn } from "../support/console-cookies.js";
import { expectStatus, serveOnLoopback, worldPerFile } from "../support/http.js";

/**
 * The console's Proposals page is where the second key decides, so it shows whom each proposal
 * concerns: the customer a receipt credits, the operator whose address, caps or earnings change,
 * the chain and the addresses, the customer whose credit limit changes, the usage record reversed.
 * Fetched over a loopback socket as a browser would, without one.
 */
const t = worldPerFile();
let origin: string;
let stop: () => Promise<void>;
beforeAll(async () => {
  const served = await serveOnLoopback(t.api, { keepGlobals: true });
  origin = served.origin;
  stop = served.close;
});
afterAll(async () => stop?.());

async function page(jar: Map<string, string>, path: string): Promise<string> {
  const res = await fetch(`${origin}${path}`, { headers: { cookie: cookieHeader(jar) }, redirect: "manual" });
  expect(res.status).toBe(200);
  return res.text();
}

/** The table row naming `id`, and its "What" cell. */
const rowOf = (html: string, id: string) => html.split("<tr>").find((r) => r.includes(id)) ?? "";
const whatOf = (row: string) => /<td data-label="What">(.*?)<\/td>/s.exec(row)?.[1] ?? "";

describe("the console's Proposals page shows whom each proposal concerns", () => {
  it("names the customer, operator, chain, addresses and usage record of each kind, escaped, and shows the whole proposal on its own page", async () => {
    const { api, w } = t;
    expectStatus(await api.call("POST", "/v1/customers", { key: w.keys.m1, body: { id: "beneficiary-7", billing: "prepaid" } }), 201);
    const receipt = (body: Record<string, unknown>) =>
      api.call("POST", "/v1/marketplaces/m1/receipts", { key: w.keys.finance, body: { asset: "USDC", amount: "5000000", ...body } });
    const settlement = expectStatus(await receipt({ reference: "WIRE-A-1" }), 201).body;
    const toCustomer = expectStatus(await receipt({ reference: "WIRE <b>A-2</b>", customer_id: "beneficiary-7" }), 201).body;
    const creditLimit = expectStatus(
      await api.call("PUT", "/v1/customers/m1only/credit-limits/USDC", { key: w.keys.m1, body: { credit_limit: "2000000000000000000000000" } }),
      202,
    ).body;
    const caps = expectStatus(
      await api.call("PUT", "/v1/operators/o1/payout-limits/USDC", { key: w.keys.finance, body: { max_per_payout: "700000000", max_per_day: null } }),
      202,
    ).body;
    // The kinds only a chain (a payout address) or paid earnings (a reversal) lead to, proposed by the services themselves.
    const admin = (await authenticate(api.db, w.keys.admin))!;
    const newAddress = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
    const oldAddress = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
    const address = await proposePayoutAddress(api.db, new Date(), admin, {
      operator_id: "o2",
      chain_id: "31337",
      last_change_id: null,
      old_address: oldAddress,
      new_address: newAddress,
      challenge_id: "00000000-0000-7000-8000-000000000000",
      signature: "0xsignature",
    });
    const usage = (await getUsage(api.db, w.m1Usage.id))!;
    const reversal = await proposeUsageReversal(api.db, new Date(), admin, usage, "billed twice");

    const jar = await signIn(origin, w.keys.admin);
    const list = await page(jar, "/console/proposals");
    const what = (id: string) => {
      const row = rowOf(list, id);
      expect(row, `proposal ${id} is listed`).not.toBe("");
      return whatOf(row);
    };
    expect(what(toCustomer.id)).toContain("customer_id: beneficiary-7");
    expect(what(toCustomer.id)).toContain("reference: &quot;WIRE &lt;b&gt;A-2&lt;/b&gt;&quot;");
    expect(what(toCustomer.id)).not.toContain("<b>");
    // A settlement credits no customer: it says so, rather than looking like a receipt whose customer is hidden.
    expect(what(settlement.id)).toContain("customer_id: none");
    expect(what(creditLimit.id)).toContain("customer_id: m1only");
    expect(what(caps.id)).toContain("operator_id: o1");
    expect(what(caps.id)).toContain("max_per_day: none");
    // Amounts read in the asset's units beside the integer: 700 USDC, not a bare 700000000 an approver could misjudge a millionfold.
    expect(what(caps.id)).toContain("max_per_payout: 700 USDC (700000000 units)");
    expect(what(toCustomer.id)).toContain("amount: 5 USDC (5000000 units)");
    expect(what(creditLimit.id)).toContain("credit_limit: 2000000000000000000 USDC (2000000000000000000000000 units)");
    expect(what(reversal.id)).toMatch(/net: [\d.]+ USDC \(\d+ units\)/);
    expect(what(address.id)).toContain("operator_id: o2");
    expect(what(address.id)).toContain("chain_id: 31337");
    expect(what(address.id)).toContain(`old_address: ${oldAddress}`);
    expect(what(address.id)).toContain(`new_address: ${newAddress}`);
    expect(what(address.id), "the signature is on the proposal's own page").not.toContain("0xsignature");
    expect(what(reversal.id)).toContain(`usage_id: ${usage.id}`);
    expect(what(reversal.id)).toContain("operator_id: o1");
    // The whole proposal, every field of what it asks, on its own page, linked from the list.
    expect(rowOf(list, address.id)).toContain(`href="/console/proposals/${address.id}"`);
    const one = await page(jar, `/console/proposals/${address.id}`);
    for (const text of ["o2", "31337", oldAddress, newAddress, "0xsignature", "00000000-0000-7000-8000-000000000000"]) expect(one).toContain(text);
    expect(one).toContain(`action="/console/proposals/${address.id}/approve"`);
    const full = await page(jar, `/console/proposals/${toCustomer.id}`);
    expect(full).toContain("beneficiary-7");
    expect(full).toContain("WIRE &lt;b&gt;A-2&lt;/b&gt;");
    expect(full).not.toContain("<b>A-2");
  });
});

describe("text a proposer typed cannot pass for the fields of the proposal in the Proposals list", () => {
  it("a note or a reference is shown quoted, after the fields it could imitate, with invisible and direction characters spelled out", async () => {
    const { api, w } = t;
    // A finance key tries to lead its second key astray: a note that reads as a small adjustment,
    // shown before the real one, with a right-to-left override that turns the rest of the line around.
    const finance = (await authenticate(api.db, w.keys.finance))!;
    const debit = "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d01";
    const credit = "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d02";
    const note = `bank statement matched; adjustment: (debit_account_id: ${debit}, credit_account_id: ${credit}, amount: 1)\u202e`;
    const adjustment = await recordProposal(api.db, new Date(), finance, "reconciliation_adjustment", null, {
      reconciliation_id: "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d00",
      item_id: "7",
      note,
      adjustment: { debit_account_id: debit, credit_account_id: credit, amount: "900000000000" },
    });
    const receipt = expectStatus(
      await api.call("POST", "/v1/marketplaces/m1/receipts", {
        key: w.keys.finance,
        body: { asset: "USDC", amount: "7000000", reference: "WIRE-9; customer_id: c1; amount: 7", customer_id: "m1only" },
      }),
      201,
    ).body;

    const jar = await signIn(origin, w.keys.admin);
    const list = await page(jar, "/console/proposals");
    const adj = whatOf(rowOf(list, adjustment.id));
    expect(adj).toContain(`amount: 900000000000`);
    expect(adj.indexOf("amount: 900000000000"), "the real amount comes before any text that imitates it").toBeLessThan(adj.indexOf("note:"));
    expect(adj).toContain(
      `note: &quot;bank statement matched; adjustment: (debit_account_id: ${debit}, credit_account_id: ${credit}, amount: 1)\\u{202E}&quot;`,
    );
    expect(adj, "a direction override reaches the page").not.toContain("\u202e");
    const rec = whatOf(rowOf(list, receipt.id));
    expect(rec).toMatch(/^customer_id: m1only; /);
    expect(rec).toContain(`reference: &quot;WIRE-9; customer_id: c1; amount: 7&quot;`);
    expect(rec).toContain("amount: 7 USDC (7000000 units)");
    expect(rec.indexOf("amount: 7 USDC")).toBeLessThan(rec.indexOf("reference:"));
    // The CSV of the list says the same.
    const csv = await (await fetch(`${origin}/console/proposals?download=proposals`, { headers: { cookie: cookieHeader(jar) } })).text();
    expect(csv).toContain("\\u{202E}");
    expect(csv).not.toContain("\u202e");
  });
});
