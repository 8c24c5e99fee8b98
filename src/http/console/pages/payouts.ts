import { qs } from "../api.js";
import { facts, filterForm, type Page, type Row } from "../layout.js";
import { operatorOf, param, when, type PageCtx } from "./context.js";

/** Payouts by state (finance sees all, an operator its own: the API decides), one payout with its transactions, an operator's addresses. */

const STATES = ["pending", "batched", "signed", "submitted", "confirmed", "failed", "converted"];

export async function payouts(ctx: PageCtx): Promise<Page> {
  const status = param(ctx, "status");
  const operator = ctx.principal.role === "operator" ? undefined : param(ctx, "operator");
  const list = await ctx.api.get(`/v1/payouts${qs({ status, operator_id: operator, limit: "200" })}`);
  const rows = (list.data as Record<string, unknown>[]).map((p) => ({
    ...p,
    created_at: when(p.created_at as string),
    waits_for: p.approval === "required" ? "second key's approval" : p.note,
  })) as Row[];
  const blocks: Page["blocks"] = [
    filterForm(ctx.path, [
      { name: "status", label: "State", value: status ?? "", options: STATES },
      ...(ctx.principal.role === "operator" ? [] : [{ name: "operator", label: "Operator", value: operator ?? "" }]),
    ]),
    {
      id: "payouts",
      caption: status ? `Payouts (${status})` : "Payouts",
      columns: [
        { key: "id", label: "Payout", href: (r) => `/console/payouts/${String(r.id)}` },
        { key: "operator_id", label: "Operator" },
        { key: "asset", label: "Asset" },
        { key: "amount_display", label: "Amount", num: true },
        { key: "status", label: "State" },
        { key: "waits_for", label: "Waiting for" },
        { key: "tx_hash", label: "Transaction", href: (r) => (r.tx_hash ? `/console/payouts/${String(r.id)}` : null) },
        { key: "created_at", label: "Requested" },
      ],
      csvColumns: [{ key: "amount", label: "amount" }],
      rows,
    },
  ];
  const op = operatorOf(ctx);
  if (op) blocks.push(...(await addressBlocks(ctx, op)));
  return { title: "Payouts", blocks };
}

async function addressBlocks(ctx: PageCtx, operator: string): Promise<Page["blocks"]> {
  const a = await ctx.api.get(`/v1/operators/${encodeURIComponent(operator)}/payout-addresses`);
  const rows = (a.data as Record<string, unknown>[]).map((x) => ({ ...x }) as Row);
  const history = (a.history as Record<string, unknown>[]).map((x) => ({ ...x }) as Row);
  const columns = Object.keys(rows[0] ?? history[0] ?? { chain_id: "", address: "" }).map((key) => ({ key, label: key.replace(/_/g, " ") }));
  return [
    "<h2>Payout addresses</h2>",
    { id: "payout-addresses", caption: "Current payout addresses", columns, rows },
    {
      id: "payout-address-history",
      caption: "Address changes",
      columns: Object.keys(history[0] ?? {}).map((key) => ({ key, label: key.replace(/_/g, " ") })),
      rows: history,
    },
  ];
}

export async function payout(ctx: PageCtx): Promise<Page> {
  const p = await ctx.api.get(`/v1/payouts/${encodeURIComponent(ctx.params.id!)}`);
  const tx: Row[] = [
    { what: "Hold (ledger transfer)", id: p.hold_transfer_id },
    { what: "Settlement (ledger transfer)", id: p.settle_transfer_id },
    { what: "Chain transaction", id: p.tx_hash, block: p.block_number, log_index: p.log_index },
    { what: "Off-chain payment reference", id: p.external_reference },
  ].filter((r) => r.id);
  return {
    title: `Payout ${String(p.id)}`,
    blocks: [
      facts([
        ["Operator", String(p.operator_id)],
        ["Amount", `${String(p.amount_display)} ${String(p.asset)}`],
        ["State", String(p.status)],
        ["Approval", String(p.approval ?? "not needed")],
        ["Chain", p.chain_id === null ? "off chain" : String(p.chain_id)],
        ["To", String(p.to_address ?? "")],
        ["Requested", when(p.created_at)],
        ["Confirmed", when(p.confirmed_at)],
        ...(p.failure_reason ? ([["Failure", String(p.failure_reason)]] as [string, string][]) : []),
      ]),
      {
        id: "transactions",
        caption: "Transactions",
        columns: [
          { key: "what", label: "What" },
          { key: "id", label: "Id / hash" },
          { key: "block", label: "Block", num: true },
          { key: "log_index", label: "Log index", num: true },
        ],
        rows: tx,
      },
    ],
  };
}
