import { qs } from "../api.js";
import { filterForm, type Page, type Row } from "../layout.js";
import { marketplaceOf, param, when, type PageCtx } from "./context.js";

/** A marketplace's customers and their balances, its recent usage records, its fee schedules. */

type Json = Record<string, unknown>;

/** At most this many customers' balances on one page (one API call each). */
const BALANCES_SHOWN = 50;

export async function customers(ctx: PageCtx): Promise<Page> {
  const m = ctx.principal.role === "marketplace" ? undefined : param(ctx, "marketplace");
  const list = await ctx.api.get(`/v1/customers${qs({ marketplace_id: m, limit: "200" })}`);
  const people = list.data as Json[];
  const balances = await Promise.all(
    people.slice(0, BALANCES_SHOWN).map(async (p) => {
      const b = await ctx.api.get(
        `/v1/customers/${encodeURIComponent(String(p.id))}/balance${qs({ marketplace_id: m ? String(p.marketplace_id) : undefined })}`,
      );
      return (b.data as Json[]).map((a) => ({ ...a, customer_id: p.id, marketplace_id: p.marketplace_id, billing: p.billing }) as Row);
    }),
  );
  return {
    title: "Customers",
    blocks: [
      ...(ctx.principal.role === "marketplace" ? [] : [filterForm(ctx.path, [{ name: "marketplace", label: "Marketplace", value: m ?? "" }])]),
      {
        id: "customer-balances",
        caption: "Balances",
        columns: [
          { key: "marketplace_id", label: "Marketplace" },
          { key: "customer_id", label: "Customer" },
          { key: "billing", label: "Billing" },
          { key: "asset", label: "Asset" },
          { key: "posted_display", label: "Posted", num: true },
          { key: "held_display", label: "Held", num: true },
          { key: "available_display", label: "Available", num: true },
          { key: "credit_limit_display", label: "Credit limit", num: true },
        ],
        csvColumns: ["posted", "held", "available", "credit_limit"].map((key) => ({ key, label: key })),
        rows: balances.flat(),
      },
      {
        id: "customers",
        caption: "Customers",
        columns: [
          { key: "marketplace_id", label: "Marketplace" },
          { key: "id", label: "Customer" },
          { key: "billing", label: "Billing" },
          { key: "created_at", label: "Created" },
          { key: "retired_at", label: "Retired" },
        ],
        rows: people.map((p) => ({ ...p, created_at: when(p.created_at as string), retired_at: when(p.retired_at as string | null) }) as Row),
      },
    ],
  };
}

export async function usage(ctx: PageCtx): Promise<Page> {
  const m = ctx.principal.role === "marketplace" ? undefined : param(ctx, "marketplace");
  const list = await ctx.api.get(`/v1/usage${qs({ limit: "200", marketplace_id: m })}`);
  const rows = (list.data as Json[]).map((u) => ({ ...u, effective_at: when(u.effective_at as string) }) as Row);
  return {
    title: "Usage records",
    blocks: [
      `<p>The most recent usage records. Records a batch refused are listed with their reasons under <a href="/console/usage-batches">Usage batches</a>.</p>`,
      {
        id: "usage",
        caption: "Recent usage",
        columns: [
          { key: "effective_at", label: "Effective" },
          { key: "external_id", label: "External id" },
          { key: "customer_id", label: "Customer" },
          { key: "operator_id", label: "Operator" },
          { key: "resource", label: "Resource" },
          { key: "quantity", label: "Quantity", num: true },
          { key: "unit", label: "Unit" },
          { key: "gross_display", label: "Gross", num: true },
          { key: "net_display", label: "Operator's net", num: true },
          { key: "status", label: "Status" },
        ],
        csvColumns: [
          { key: "gross", label: "gross" },
          { key: "net", label: "net" },
        ],
        rows,
      },
    ],
  };
}

export async function feeSchedules(ctx: PageCtx): Promise<Page> {
  const m = marketplaceOf(ctx);
  if (!m) return { title: "Fee schedules", blocks: [filterForm(ctx.path, [{ name: "marketplace", label: "Marketplace", value: "" }])] };
  const list = await ctx.api.get(`/v1/marketplaces/${encodeURIComponent(m)}/fee-schedules`);
  const rows = (list.data as Json[]).flatMap((s) =>
    (s.rules as Json[]).map((r) => ({
      version: s.version as number,
      effective_from: when(s.effective_from as string),
      party: r.party as string,
      bps: r.bps as number,
      percent: `${(r.bps as number) / 100}%`,
    })),
  );
  return {
    title: `Fee schedules of ${m}`,
    blocks: [
      {
        id: "fee-schedules",
        caption: "Rules by version",
        columns: [
          { key: "version", label: "Version", num: true },
          { key: "effective_from", label: "Effective from" },
          { key: "party", label: "Party" },
          { key: "bps", label: "Basis points", num: true },
          { key: "percent", label: "Percent", num: true },
        ],
        rows,
      },
    ],
  };
}
