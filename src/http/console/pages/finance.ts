import { escapeHtml as e } from "../../html.js";
import { qs } from "../api.js";
import { cards, filterForm, type Page, type Row } from "../layout.js";
import { param, periodOf, when, type PageCtx } from "./context.js";

/** Finance's reports: trial balance, fee revenue, the treasury check, the audit log (each the API's report, as a table with its CSV). */

type Json = Record<string, unknown>;

/** At most this many accounts in the trial balance's table (one per customer and asset, it grows with the marketplaces); its CSV has them all. */
const ACCOUNTS_SHOWN = 1000;

export async function trialBalance(ctx: PageCtx): Promise<Page> {
  const asOf = param(ctx, "as_of");
  const query = qs({ as_of: asOf });
  const tb = await ctx.api.get(`/v1/reports/trial-balance${query}`);
  const all = tb.accounts as Json[];
  const rows = all.slice(0, ACCOUNTS_SHOWN).map((a) => ({ ...a }) as Row);
  const cut = all.length > ACCOUNTS_SHOWN ? ` The first ${ACCOUNTS_SHOWN} of ${all.length} accounts are shown: the CSV has them all.` : "";
  return {
    title: "Trial balance",
    blocks: [
      filterForm(ctx.path, [{ name: "as_of", label: "As of (instant, ISO 8601; empty: now)", value: asOf ?? "", type: "text" }]),
      `<p>${asOf ? `Balances as of ${e(when(tb.as_of as string))}.` : "Balances now."} Debits and credits per account, in each asset's display units.${cut}</p>`,
      {
        id: "trial-balance",
        caption: "Accounts",
        csvPath: `/v1/reports/trial-balance${qs({ as_of: asOf, format: "csv" })}`,
        columns: [
          { key: "asset", label: "Asset" },
          { key: "marketplace_id", label: "Marketplace" },
          { key: "ref", label: "Account" },
          { key: "code", label: "Code" },
          { key: "normal_side", label: "Normal side" },
          { key: "debits_display", label: "Debits", num: true },
          { key: "credits_display", label: "Credits", num: true },
          { key: "balance_display", label: "Balance", num: true },
        ],
        rows,
      },
    ],
  };
}

export async function feeRevenue(ctx: PageCtx): Promise<Page> {
  const { from, to } = periodOf(ctx);
  const groupBy = param(ctx, "group_by") ?? "day";
  const marketplace = param(ctx, "marketplace_id");
  const q = { from, to, group_by: groupBy, marketplace_id: marketplace };
  const r = await ctx.api.get(`/v1/reports/fee-revenue${qs(q)}`);
  return {
    title: "Fee revenue",
    blocks: [
      filterForm(ctx.path, [
        { name: "from", label: "From", value: from },
        { name: "to", label: "To (excluded)", value: to },
        { name: "group_by", label: "Per", value: groupBy, options: ["day", "month"] },
        { name: "marketplace_id", label: "Marketplace", value: marketplace ?? "" },
      ]),
      {
        id: "fee-revenue",
        caption: `Revenue per ${groupBy}`,
        csvPath: `/v1/reports/fee-revenue${qs({ ...q, format: "csv" })}`,
        columns: [
          { key: "period", label: "Period" },
          { key: "asset", label: "Asset" },
          { key: "marketplace_id", label: "Marketplace" },
          { key: "party", label: "Party" },
          { key: "revenue_display", label: "Revenue", num: true },
          { key: "entries", label: "Entries", num: true },
        ],
        rows: r.data as Row[],
      },
      {
        id: "fee-balances",
        caption: "Revenue to date, opening and closing",
        columns: [
          { key: "asset", label: "Asset" },
          { key: "marketplace_id", label: "Marketplace" },
          { key: "party", label: "Party" },
          { key: "opening_display", label: "Opening", num: true },
          { key: "movements_display", label: "Movements", num: true },
          { key: "closing_display", label: "Closing", num: true },
        ],
        csvColumns: [
          { key: "opening", label: "opening" },
          { key: "movements", label: "movements" },
          { key: "closing", label: "closing" },
        ],
        rows: r.balances as Row[],
      },
    ],
  };
}

export async function treasury(ctx: PageCtx): Promise<Page> {
  const chainId = param(ctx, "chain_id");
  const asset = param(ctx, "asset");
  const form = filterForm(ctx.path, [
    { name: "chain_id", label: "Chain id", value: chainId ?? "" },
    { name: "asset", label: "Asset", value: asset ?? "" },
  ]);
  if (!chainId || !asset)
    return { title: "Treasury check", blocks: [form, "<p>Choose a chain and an asset to compare the treasury on chain with the ledger.</p>"] };
  const t = await ctx.api.get(`/v1/treasury${qs({ chain_id: chainId, asset })}`);
  const rows: Row[] = [
    { what: "On chain: vault", amount: t.on_chain.vault_display, units: t.on_chain.vault },
    { what: "On chain: signer", amount: t.on_chain.signer_display, units: t.on_chain.signer },
    { what: "On chain: total", amount: t.on_chain.total_display, units: t.on_chain.total },
    { what: "Ledger treasury account", amount: t.ledger_display, units: t.ledger },
    { what: `In flight (${t.in_flight.payouts} payouts)`, amount: t.in_flight.amount_display, units: t.in_flight.amount },
    { what: "Expected on chain", amount: t.expected_on_chain_display, units: t.expected_on_chain },
    { what: "Unexplained", amount: t.unexplained_display, units: t.unexplained },
    { what: `Pending (${t.pending.payouts} payouts)`, amount: t.pending.amount_display, units: t.pending.amount },
    { what: "Shortfall (fund the vault by)", amount: t.pending.shortfall_display, units: t.pending.shortfall },
  ];
  return {
    title: "Treasury check",
    blocks: [
      form,
      cards([
        ["Unexplained", `${t.unexplained_display} ${asset}`],
        ["Shortfall", `${t.pending.shortfall_display} ${asset}`],
      ]),
      {
        id: "treasury",
        caption: `Treasury of ${asset} on chain ${chainId}`,
        columns: [
          { key: "what", label: "Line" },
          { key: "amount", label: `Amount (${asset})`, num: true },
        ],
        csvColumns: [{ key: "units", label: "units" }],
        rows,
      },
    ],
  };
}

export async function auditLog(ctx: PageCtx): Promise<Page> {
  const keyId = param(ctx, "key_id");
  const from = param(ctx, "from");
  const to = param(ctx, "to");
  const cursor = param(ctx, "cursor");
  const log = await ctx.api.get(`/v1/audit/log${qs({ key_id: keyId, from, to, cursor, limit: "200" })}`);
  const next = log.next_cursor ? `<p><a href="${e(`${ctx.path}${qs({ key_id: keyId, from, to, cursor: log.next_cursor as string })}`)}">Next page</a></p>` : "";
  return {
    title: "Audit log",
    blocks: [
      filterForm(ctx.path, [
        { name: "key_id", label: "Key id", value: keyId ?? "" },
        { name: "from", label: "From", value: from ?? "" },
        { name: "to", label: "To (excluded)", value: to ?? "" },
      ]),
      {
        id: "audit-log",
        caption: "Requests that changed or tried to change something",
        columns: [
          { key: "at", label: "At" },
          { key: "key_id", label: "Key" },
          { key: "role", label: "Role" },
          { key: "scope_id", label: "Scope" },
          { key: "method", label: "Method" },
          { key: "path", label: "Path" },
          { key: "status", label: "Status", num: true },
          { key: "request_id", label: "Request id" },
        ],
        rows: log.data as Row[],
      },
      next,
    ],
  };
}
