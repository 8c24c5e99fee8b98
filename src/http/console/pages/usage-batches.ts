import { escapeHtml as e } from "../../html.js";
import { qs } from "../api.js";
import { facts, filterForm, type Page, type Row } from "../layout.js";
import { param, when, type PageCtx } from "./context.js";

/** A marketplace's recent usage batches (finance: any marketplace's) and one batch with its refused records and the reasons. */

type Json = Record<string, unknown>;

/** Rows on one page of each list; the next page is a link (the API's cursor). */
const BATCHES_PER_PAGE = "50";
const REJECTIONS_PER_PAGE = "200";

/** A link to the next page of the same list, keeping the page's filters. */
function nextLink(ctx: PageCtx, cursor: unknown, name = "cursor"): string {
  if (typeof cursor !== "string") return "";
  const q = new URLSearchParams(ctx.q);
  q.delete("download");
  q.set(name, cursor);
  return `<p><a href="${e(`${ctx.path}?${q.toString()}`)}" rel="next">Next page</a></p>`;
}

export async function usageBatches(ctx: PageCtx): Promise<Page> {
  const m = ctx.principal.role === "marketplace" ? undefined : param(ctx, "marketplace");
  const rejections = param(ctx, "has_rejections");
  const list = await ctx.api.get(
    `/v1/usage-batches${qs({ marketplace_id: m, has_rejections: rejections, cursor: param(ctx, "cursor"), limit: BATCHES_PER_PAGE })}`,
  );
  const rows = (list.data as Json[]).map((b) => ({ ...b, received: when(b.received_at as string), totals: undefined }) as Row);
  return {
    title: "Usage batches",
    blocks: [
      filterForm(ctx.path, [
        ...(ctx.principal.role === "marketplace" ? [] : [{ name: "marketplace", label: "Marketplace", value: m ?? "" }]),
        { name: "has_rejections", label: "With refused records", value: rejections ?? "", options: ["true", "false"] },
      ]),
      "<p>Every batch posted to <code>POST /v1/usage/batch</code>, newest first, with what became of its records. Open a batch to see its refused records and the reasons.</p>",
      {
        id: "usage-batches",
        caption: "Recent batches",
        columns: [
          { key: "received", label: "Received", href: (r) => `/console/usage-batches/${String(r.id)}` },
          { key: "marketplace_id", label: "Marketplace" },
          { key: "records", label: "Records", num: true },
          { key: "accepted", label: "Accepted", num: true },
          { key: "duplicate", label: "Duplicates", num: true },
          { key: "rejected", label: "Refused", num: true },
          { key: "id", label: "Batch" },
        ],
        csvColumns: [
          { key: "received_at", label: "received_at" },
          { key: "idempotency_key", label: "idempotency_key" },
        ],
        rows,
      },
      nextLink(ctx, list.next_cursor),
    ],
  };
}

export async function usageBatch(ctx: PageCtx): Promise<Page> {
  const id = ctx.params.id!;
  const b = await ctx.api.get(`/v1/usage-batches/${encodeURIComponent(id)}${qs({ cursor: param(ctx, "after"), limit: REJECTIONS_PER_PAGE })}`);
  const page = b.rejections as { data: Json[]; next_cursor: string | null };
  return {
    title: `Usage batch ${id}`,
    blocks: [
      facts([
        ["Marketplace", String(b.marketplace_id)],
        ["Received", when(b.received_at as string)],
        ["Idempotency-Key", String(b.idempotency_key ?? "")],
        ["Records", String(b.records)],
        ["Accepted", String(b.accepted)],
        ["Duplicates", String(b.duplicate)],
        ["Refused", String(b.rejected)],
      ]),
      {
        id: "totals",
        caption: "Accepted records per asset",
        columns: [
          { key: "asset", label: "Asset" },
          { key: "records", label: "Records", num: true },
          { key: "gross", label: "Gross (smallest unit)", num: true },
        ],
        rows: (b.totals as Json[]).map((t) => ({ ...t }) as Row),
      },
      {
        id: "rejections",
        caption: "Refused records",
        columns: [
          { key: "index", label: "Place in batch", num: true },
          { key: "external_id", label: "External id" },
          { key: "code", label: "Problem" },
          { key: "field", label: "Field" },
          { key: "reason", label: "Reason" },
        ],
        rows: page.data.map((r) => ({ ...r }) as Row),
      },
      nextLink(ctx, page.next_cursor, "after"),
    ],
  };
}
