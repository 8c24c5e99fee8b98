import { escapeHtml as e } from "../../html.js";
import { qs } from "../api.js";
import { lineChart, type ChartSeries } from "../chart.js";
import { cards, filterForm, type Page, type Row } from "../layout.js";
import { operatorOf, periodOf, when, type PageCtx } from "./context.js";

/** An operator's money: balances, earnings and realised rate per day and resource (charts and tables), the statement. */

type Json = Record<string, unknown>;

const chooseOperator = (ctx: PageCtx, title: string): Page => ({
  title,
  blocks: [filterForm(ctx.path, [{ name: "operator", label: "Operator id", value: "" }]), "<p>Name the operator to show.</p>"],
});

/** Each asset's scale (decimals), for the charts' labels. */
async function scales(ctx: PageCtx): Promise<Map<string, number>> {
  const list = await ctx.api.get(`/v1/assets${qs({ limit: "200" })}`);
  return new Map((list.data as { code: string; scale: number }[]).map((a) => [a.code, a.scale]));
}

function balanceBlocks(b: Json): Page["blocks"] {
  const rows = b.data as Json[];
  const summary = rows.flatMap((r) => [
    [`Payable now (${String(r.asset)})`, String(r.payable_now_display)],
    [`Awaiting funds (${String(r.asset)})`, String(r.awaiting_funds_display)],
  ]) as [string, string][];
  return [
    cards(summary),
    {
      id: "balances",
      caption: "Balances",
      columns: [
        { key: "asset", label: "Asset" },
        { key: "lifetime_earned_display", label: "Earned (lifetime)", num: true },
        { key: "payable_now_display", label: "Payable now", num: true },
        { key: "awaiting_funds_display", label: "Awaiting funds", num: true },
        { key: "held_by_disputes_display", label: "Held by disputes", num: true },
        { key: "in_transit_display", label: "In transit", num: true },
        { key: "paid_out_display", label: "Paid", num: true },
      ],
      csvColumns: ["lifetime_earned", "payable_now", "awaiting_funds", "held_by_disputes", "in_transit", "paid_out"].map((key) => ({ key, label: key })),
      rows: rows as Row[],
    },
  ];
}

/** Series of one chart: one per key (asset, or resource and asset), the value's integer string per day. */
function seriesOf(rows: Json[], name: (r: Json) => string, value: (r: Json) => unknown): ChartSeries[] {
  const by = new Map<string, ChartSeries>();
  for (const r of rows) {
    const units = value(r);
    if (typeof units !== "string") continue;
    const key = name(r);
    if (!by.has(key)) by.set(key, { name: key, points: [] });
    by.get(key)!.points.push({ x: String(r.group), units });
  }
  return [...by.values()];
}

const periodForm = (ctx: PageCtx, op: string, from: string, to: string) =>
  filterForm(ctx.path, [
    ...(ctx.principal.role === "operator" ? [] : [{ name: "operator", label: "Operator", value: op }]),
    { name: "from", label: "From", value: from },
    { name: "to", label: "To (excluded)", value: to },
  ]);

const EARNING_COLUMNS = [
  { key: "group", label: "Day" },
  { key: "asset", label: "Asset" },
  { key: "unit", label: "Unit" },
  { key: "paid_hours", label: "Paid hours", num: true },
  { key: "gross_display", label: "Gross", num: true },
  { key: "fees_display", label: "Fees", num: true },
  { key: "net_display", label: "Net", num: true },
  { key: "effective_rate_per_hour", label: "Net per hour", num: true },
];

/** The charts of one asset (the first one earned in the period): net per day, and the realised rate per hour by resource. */
function charts(dayRows: Json[], resourceRows: Json[], asset: string, scale: number): string[] {
  const oneAsset = (rows: Json[]) => rows.filter((r) => r.asset === asset);
  return [
    lineChart({
      id: "chart-net",
      title: `Net earnings per day (${asset})`,
      unitLabel: asset,
      scale: scale,
      series: seriesOf(
        oneAsset(dayRows),
        (r) => `net ${String(r.asset)}`,
        (r) => r.net,
      ),
    }),
    lineChart({
      id: "chart-rate",
      title: `Realised rate per GPU-hour by resource (${asset} per hour)`,
      unitLabel: `${asset}/h`,
      scale: scale,
      series: seriesOf(
        oneAsset(resourceRows),
        (r) => String(r.resource ?? "all"),
        (r) => r.effective_rate_per_hour_units,
      ),
    }),
  ];
}

export async function earnings(ctx: PageCtx): Promise<Page> {
  const op = operatorOf(ctx);
  if (!op) return chooseOperator(ctx, "Earnings");
  const { from, to } = periodOf(ctx);
  const base = `/v1/operators/${encodeURIComponent(op)}/earnings`;
  const [balances, perDay, perResource, scale] = await Promise.all([
    ctx.api.get(`/v1/operators/${encodeURIComponent(op)}/balances`),
    ctx.api.get(`${base}${qs({ from, to, group_by: "day" })}`),
    ctx.api.get(`${base}${qs({ from, to, group_by: "day", by_resource: "true" })}`),
    scales(ctx),
  ]);
  const dayRows = perDay.data as Json[];
  const resourceRows = perResource.data as Json[];
  const firstAsset = String(dayRows[0]?.asset ?? resourceRows[0]?.asset ?? "");
  return {
    title: `Earnings of ${op}`,
    blocks: [
      periodForm(ctx, op, from, to),
      ...balanceBlocks(balances),
      ...charts(dayRows, resourceRows, firstAsset, scale.get(firstAsset) ?? 0),
      {
        id: "earnings-per-day",
        caption: "Per day",
        csvPath: `${base}${qs({ from, to, group_by: "day", format: "csv" })}`,
        columns: EARNING_COLUMNS,
        rows: dayRows as Row[],
      },
      {
        id: "earnings-per-resource",
        caption: "Per day and resource",
        csvPath: `${base}${qs({ from, to, group_by: "day", by_resource: "true", format: "csv" })}`,
        columns: [EARNING_COLUMNS[0]!, { key: "resource", label: "Resource" }, ...EARNING_COLUMNS.slice(1)],
        rows: resourceRows as Row[],
      },
      `<p><a href="/console/statement${e(qs({ operator: ctx.principal.role === "operator" ? undefined : op, from, to }))}">Statement of this period</a></p>`,
    ],
  };
}

export async function statement(ctx: PageCtx): Promise<Page> {
  const op = operatorOf(ctx);
  if (!op) return chooseOperator(ctx, "Statement");
  const { from, to } = periodOf(ctx);
  const base = `/v1/operators/${encodeURIComponent(op)}/statement`;
  const s = await ctx.api.get(`${base}${qs({ from, to, limit: "1000" })}`);
  const rows = (s.data as Json[]).map((l) => ({ ...l, effective_at: when(l.effective_at as string) })) as Row[];
  return {
    title: `Statement of ${op}`,
    blocks: [
      periodForm(ctx, op, from, to),
      {
        id: "statement",
        caption: `Lines from ${when(from)} to ${when(to)}`,
        csvPath: `${base}${qs({ from, to, format: "csv" })}`,
        columns: [
          { key: "effective_at", label: "Effective" },
          { key: "asset", label: "Asset" },
          { key: "description", label: "Description" },
          { key: "amount_display", label: "Amount", num: true },
          { key: "balance_after_display", label: "Balance after", num: true },
          { key: "payout_id", label: "Payout", href: (r) => (r.payout_id ? `/console/payouts/${String(r.payout_id)}` : null) },
          { key: "tx_hash", label: "Transaction" },
        ],
        rows,
      },
      s.next_cursor ? "<p>More lines than shown: download the CSV for all of them.</p>" : "",
    ],
  };
}
