/**
 * The hybrid part of the demo's report (scripts/demo-hybrid.ts), read back through the API: each
 * payout in USD with what its parts became (GET /v1/conversions, the parts' payouts, the rates they
 * came from), the customer's deposit conversion (its transfer's metadata), and the platform's
 * position in each token from the trial balance. Amounts as the API gives them: integers as
 * strings, and their `_display` forms for people.
 */
import type { components, LedgerClient } from "../clients/typescript/index.js";
import type { DemoApi } from "./demo-parties.js";

type Customer = components["schemas"]["CustomerWithAccounts"];
const TOKENS = ["TUSD", "ETH", "NET"];

export interface HybridReport {
  marketplace: string;
  pricing_currency: string;
  deposit: {
    customer: string;
    paid: string;
    paid_display: string;
    paid_asset: string;
    credited: string;
    credited_display: string;
    rate: string;
    rate_source: string;
    rate_observed_at: string;
    usd_balance_display: string;
  };
  payouts: Array<{
    operator: string;
    payout_id: string;
    status: string;
    amount: string;
    amount_display: string;
    parts: Array<{
      asset: string;
      bps: number;
      amount: string;
      amount_display: string;
      /** Whole `asset` per whole USD, as GET /v1/conversions gives it. */
      rate: string;
      /** The rate as its source quotes it (GET /v1/rates), e.g. "2.5 USD per NET". */
      quoted: string | null;
      rate_source: string | null;
      rate_source_ref: string | null;
      rate_observed_at: string | null;
      value_usd: string;
      value_usd_display: string;
      status: string;
      tx_hash: string | null;
      block: string | null;
    }>;
  }>;
  platform_position: Array<{ asset: string; position_display: string; book_value_usd_display: string }>;
  fx_gains_losses_usd_display: string;
}

export async function collectHybridReport(
  api: DemoApi,
  market: LedgerClient,
  run: { marketplace: string; customer: Customer; payouts: string[] },
): Promise<HybridReport> {
  const { admin, ok } = api;
  const rates = new Map(ok(await admin.GET("/v1/rates", { params: { query: { limit: 500 } } })).data.map((r) => [r.id, r]));
  const payouts = [];
  for (const id of run.payouts) {
    const p = ok(await admin.GET("/v1/payouts/{id}", { params: { path: { id } } }));
    // In the order of the operator's preference.
    const order = (p.splits ?? []).map((s) => s.asset);
    const conversions = ok(await admin.GET("/v1/conversions", { params: { query: { payout_id: id } } })).data.sort(
      (a, b) => order.indexOf(a.to_asset) - order.indexOf(b.to_asset),
    );
    const parts = [];
    for (const c of conversions) {
      const child = ok(await admin.GET("/v1/payouts/{id}", { params: { path: { id: c.child_payout_id! } } }));
      const rate = c.rate_id === null ? undefined : rates.get(c.rate_id);
      parts.push({
        asset: c.to_asset,
        bps: c.bps,
        amount: c.to_amount,
        amount_display: c.to_amount_display,
        rate: c.rate,
        quoted: rate ? `${rate.value} ${rate.quote} per ${rate.base}` : null,
        rate_source: c.rate_source,
        rate_source_ref: rate?.source_ref ?? null,
        rate_observed_at: c.rate_observed_at,
        value_usd: c.value_in_from_asset,
        value_usd_display: c.value_in_from_asset_display,
        status: child.status,
        tx_hash: child.tx_hash,
        block: child.block_number,
      });
    }
    payouts.push({ operator: p.operator_id, payout_id: p.id, status: p.status, amount: p.amount, amount_display: p.amount_display, parts });
  }

  // The customer's conversion: the transfer on its USD balance that carries the conversion's metadata.
  const accounts = run.customer.accounts;
  const [tusd, usd] = [accounts.find((a) => a.asset === "TUSD")!, accounts.find((a) => a.asset === "USD")!];
  const transfers = ok(await market.GET("/v1/transfers", { params: { query: { account_id: usd.account_id } } })).data;
  const conversion = transfers.find((t) => t.metadata !== null && typeof t.metadata === "object" && "conversion" in t.metadata);
  if (!conversion) throw new Error(`no conversion on ${run.customer.id}'s USD balance`);
  const meta = conversion.metadata as { rate: { value: string; source: string; observed_at: string } };
  const paid = conversion.legs.find((l) => l.debit_account_id === tusd.account_id)!;
  const credited = conversion.legs.find((l) => l.credit_account_id === usd.account_id)!;

  const trial = ok(await admin.GET("/v1/reports/trial-balance", { params: { query: {} } }));
  const balance = (asset: string, ref: string) =>
    trial.accounts.find((a) => a.asset === asset && a.ref === ref && a.marketplace_id === null)?.balance_display ?? "0";
  return {
    marketplace: run.marketplace,
    pricing_currency: "USD",
    deposit: {
      customer: run.customer.id,
      paid: paid.amount,
      paid_display: paid.amount_display,
      paid_asset: "TUSD",
      credited: credited.amount,
      credited_display: credited.amount_display,
      rate: meta.rate.value,
      rate_source: meta.rate.source,
      rate_observed_at: meta.rate.observed_at,
      usd_balance_display: usd.posted_display,
    },
    payouts,
    platform_position: TOKENS.map((t) => ({
      asset: t,
      position_display: balance(t, "conversion:USD"),
      book_value_usd_display: balance("USD", `conversion:${t}`),
    })),
    fx_gains_losses_usd_display: balance("USD", "fx:gains_losses"),
  };
}

const time = (iso: string | null) => (iso === null ? "-" : `${iso.slice(11, 19)} UTC`);

export function printHybrid(r: HybridReport, say: (s: string) => void): void {
  say(
    `\n=== Hybrid settlement on ${r.marketplace} (priced in ${r.pricing_currency}; fees: marketplace 5%, protocol 2%; paid at on-chain price feeds' rates) ===\n`,
  );
  const d = r.deposit;
  say("The customer's deposit, converted into USD");
  say(`  ${d.customer}: paid ${d.paid_display} ${d.paid_asset} on chain → ${d.credited_display} USD at ${d.rate} USD per ${d.paid_asset}`);
  say(`    (${d.rate_source}, observed ${time(d.rate_observed_at)}); its USD balance then: ${d.usd_balance_display}`);
  say("\nPayouts asked for in USD, and what each part was paid in on chain at the rate of the moment");
  for (const p of r.payouts) {
    const splits = p.parts.map((c) => `${c.bps / 100}% ${c.asset}`).join(", ");
    say(`  ${p.operator.padEnd(14)} ${p.amount_display.padStart(10)} USD  ${p.status} (${splits})`);
    for (const c of p.parts) {
      say(
        `    ${c.amount_display.padStart(18)} ${c.asset.padEnd(4)} worth ${c.value_usd_display.padStart(9)} USD  at ${c.rate} ${c.asset} per USD (${c.rate_source ?? "-"}: ${c.quoted ?? "-"}, observed ${time(c.rate_observed_at)})`,
      );
      say(`    ${"".padStart(23)} ${c.status} ${c.tx_hash ?? ""} (block ${c.block ?? "-"})`);
    }
  }
  say("\nThe platform's position per token (trial balance: conversion:* and fx:gains_losses, balances on their credit side)");
  say("  in each token what the platform holds (positive) or gave out (negative); in USD, that position at the last rate used, on the other side");
  for (const p of r.platform_position)
    say(
      `  ${p.asset.padEnd(5)} conversion:USD ${p.position_display.padStart(12)} ${p.asset.padEnd(4)}   conversion:${p.asset.padEnd(4)} ${p.book_value_usd_display.padStart(11)} USD`,
    );
  say(`  USD   fx:gains_losses ${r.fx_gains_losses_usd_display} USD (positive: a gain: NET fell from 2.50 to 2.00 USD after the platform had paid NET out)`);
}
