import { randomUUID } from "node:crypto";
import { display } from "../../display.js";
import { escapeHtml as e } from "../../html.js";
import { qs } from "../api.js";
import { csrfField, facts, filterForm, type Page, type Row } from "../layout.js";
import { param, when, type PageCtx } from "./context.js";

/**
 * Four-eyes work: proposals to approve or reject, reconciliation runs and their items to resolve.
 * The forms post to the console, which posts to the API with the session's key: the API refuses a
 * key approving its own proposal (four_eyes), so one person alone never moves money here either.
 */

/** A POST form's hidden fields: the session's CSRF token and an idempotency key (a form sent twice acts once). */
const hidden = (csrf: string) => `${csrfField(csrf)}<input type="hidden" name="idempotency_key" value="${randomUUID()}">`;

function decideForms(ctx: PageCtx, id: string): string {
  const form = (verb: "approve" | "reject", label: string, cls: string) =>
    `<form class="inline" method="post" action="/console/proposals/${e(id)}/${verb}">${hidden(ctx.csrf)}
<label>Reason<input name="reason" maxlength="2000"${verb === "reject" ? " required" : ""}></label><button type="submit"${cls}>${label}</button></form>`;
  return form("approve", "Approve", "") + form("reject", "Reject", ' class="secondary"');
}

/**
 * Payload fields the What column leaves out, as they repeat or prove what it shows: an asset's id
 * beside its code, the form a receipt's reference is compared in, the address change a proposal
 * was made against and the signature proving the new address, a rate's fraction beside its
 * decimal. The proposal's own page shows every field.
 */
const PROOF_AND_IDS = new Set(["asset_id", "base_asset_id", "quote_asset_id", "reference_key", "last_change_id", "challenge_id", "signature", "num", "den"]);

/** The fields the What column starts with, in this order (the stored payload keeps no order): whom the proposal concerns, then where to. */
const LEADING = ["customer_id", "operator_id", "payout_id", "usage_id", "chain_id", "to_address", "old_address", "new_address"];

/** A value the payload holds as a word: an id, a code, an amount, an address, an instant. */
const WORD = /^-?[A-Za-z0-9][A-Za-z0-9_.:@/+-]*$/;

/** Text a key typed (a note, a reason, a reference), as opposed to a word. */
const isTyped = (v: unknown): v is string => typeof v === "string" && !WORD.test(v);

/**
 * Typed text in quotes, its quotes and backslashes escaped, and every character that is invisible
 * or turns the text around (controls, format characters such as direction overrides, separators
 * other than the space) spelled out as \u{…}: a note cannot pass for fields of the proposal, hide
 * the line's end, or reorder what follows it.
 */
export function quotedText(s: string): string {
  const spelled = s.replace(/[\\"]|[\p{C}\p{Zl}\p{Zp}]|(?! )\p{Zs}/gu, (ch) =>
    ch === "\\" || ch === '"' ? `\\${ch}` : `\\u{${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}}`,
  );
  return `"${spelled}"`;
}

/** A payload value as text: null as "none", typed text quoted, an object as its fields in parentheses. */
function valueText(v: unknown): string {
  if (v === null || v === undefined) return "none";
  if (typeof v === "string") return isTyped(v) ? quotedText(v) : v;
  if (typeof v === "object" && !Array.isArray(v)) {
    return `(${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${k}: ${valueText(x)}`)
      .join(", ")})`;
  }
  return JSON.stringify(v);
}

/** Payload fields that are amounts of the proposal's asset, in its smallest unit. */
const AMOUNTS = new Set(["amount", "credit_limit", "max_per_payout", "max_per_day", "min_amount", "approval_threshold", "max_gross_per_record", "net"]);

/** The scale of each asset, by code and by id (an amount is read in the asset its payload names). */
type Scales = Map<string, { code: string; scale: number }>;

async function assetScales(ctx: PageCtx): Promise<Scales> {
  const list = await ctx.api.get(`/v1/assets${qs({ limit: "1000" })}`);
  const out: Scales = new Map();
  for (const a of list.data as { id: string; code: string; scale: number }[]) {
    out.set(a.code, { code: a.code, scale: a.scale });
    out.set(a.id, { code: a.code, scale: a.scale });
  }
  return out;
}

/** An amount as the asset's units beside its integer ("700.000000 USDC (700000000 units)"); the integer alone when the asset is unknown. */
function amountText(v: unknown, asset: { code: string; scale: number } | undefined): string | undefined {
  if (!asset || typeof v !== "string" || !/^\d+$/.test(v)) return undefined;
  return `${display(v, asset.scale)} ${asset.code} (${v} units)`;
}

/**
 * What a proposal asks, in one line: every field of its payload but PROOF_AND_IDS, so the approver
 * sees whom it concerns (the customer a receipt credits, the operator whose address, caps, payout
 * or earnings it changes, the chain and the addresses, the usage record). Its marketplace is in a
 * column of its own; a receipt that names no customer says it is the marketplace's settlement.
 * Amounts read in the asset's units beside their integer, so that none is misjudged by its
 * decimals. Text the proposer typed (a note, a reference) comes last and quoted, so that it cannot
 * be read as the amount or the accounts, nor come before them.
 */
function proposalWhat(p: Record<string, unknown>, scales: Scales): string {
  const payload = p.payload as Record<string, unknown>;
  const asset = scales.get(String(payload.asset ?? payload.asset_id ?? ""));
  const rank = (k: string, v: unknown) => (LEADING.includes(k) ? LEADING.indexOf(k) : isTyped(v) ? LEADING.length + 1 : LEADING.length);
  const text = (k: string, v: unknown) =>
    p.kind === "receipt" && k === "customer_id" && v === null
      ? "none (the marketplace's settlement)"
      : ((AMOUNTS.has(k) ? amountText(v, asset) : undefined) ?? valueText(v));
  return Object.entries(payload)
    .sort(([a, x], [b, y]) => rank(a, x) - rank(b, y))
    .filter(([k, v]) => !PROOF_AND_IDS.has(k) && !(k === "marketplace_id" && v === p.marketplace_id))
    .map(([k, v]) => `${k}: ${text(k, v)}`)
    .join("; ");
}

export async function proposals(ctx: PageCtx): Promise<Page> {
  const status = param(ctx, "status") ?? "proposed";
  const [list, scales] = await Promise.all([ctx.api.get(`/v1/proposals${qs({ status, limit: "200" })}`), assetScales(ctx)]);
  const rows = (list.data as Record<string, unknown>[]).map((p) => ({
    ...p,
    proposed_at: when(p.proposed_at as string),
    decided_at: when(p.decided_at as string | null),
    what: proposalWhat(p, scales),
  })) as Row[];
  return {
    title: "Proposals",
    blocks: [
      filterForm(ctx.path, [{ name: "status", label: "Status", value: status, options: ["proposed", "approved", "rejected"] }]),
      "<p>A change that moves money waits here until a second key approves it. The key that proposed it cannot. Open a proposal to see every field of it.</p>",
      {
        id: "proposals",
        caption: `Proposals (${status})`,
        columns: [
          { key: "id", label: "Id", href: (r) => `/console/proposals/${String(r.id)}` },
          { key: "kind", label: "Kind" },
          { key: "marketplace_id", label: "Marketplace" },
          { key: "what", label: "What" },
          { key: "proposed_by", label: "Proposed by" },
          { key: "proposed_at", label: "Proposed" },
          { key: "status", label: "Status" },
          { key: "decided_by", label: "Decided by" },
        ],
        rows,
        action: (r) => (r.status === "proposed" ? decideForms(ctx, String(r.id)) : ""),
      },
    ],
  };
}

/** An object's fields as rows, nested ones under their dotted path ("adjustment.amount"). */
function fieldRows(o: Record<string, unknown>, prefix = ""): Row[] {
  return Object.entries(o).flatMap(([k, v]) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? fieldRows(v as Record<string, unknown>, `${prefix}${k}.`)
      : [{ field: `${prefix}${k}`, value: v === null ? "none" : typeof v === "string" ? v : JSON.stringify(v) }],
  );
}

/** One proposal: who proposed and decided it, and every field of what it asks and of what approving it did. */
export async function proposal(ctx: PageCtx): Promise<Page> {
  const p = await ctx.api.get(`/v1/proposals/${encodeURIComponent(ctx.params.id!)}`);
  const fields = [
    { key: "field", label: "Field" },
    { key: "value", label: "Value" },
  ];
  return {
    title: `Proposal ${String(p.id)}`,
    blocks: [
      facts([
        ["Kind", String(p.kind)],
        ["Marketplace", String(p.marketplace_id ?? "")],
        ["Status", String(p.status)],
        ["Proposed by", String(p.proposed_by)],
        ["Proposed", when(p.proposed_at as string)],
        ["Decided by", String(p.decided_by ?? "")],
        ["Decided", when(p.decided_at as string | null)],
        ["Reason", String(p.reason ?? "")],
      ]),
      { id: "payload", caption: "What it asks", columns: fields, rows: fieldRows(p.payload as Record<string, unknown>) },
      ...(p.result ? [{ id: "result", caption: "What approving it did", columns: fields, rows: fieldRows(p.result as Record<string, unknown>) }] : []),
      ...(p.status === "proposed" ? [`<div>${decideForms(ctx, String(p.id))}</div>`] : []),
    ],
  };
}

export async function reconciliations(ctx: PageCtx): Promise<Page> {
  const list = await ctx.api.get(`/v1/reconciliations${qs({ limit: "100" })}`);
  const rows = (list.data as Record<string, unknown>[]).map((r) => ({
    ...r,
    blocks: `${r.from_block as number}–${r.to_block as number}`,
    summary: Object.entries(r.summary as Record<string, number>)
      .map(([k, v]) => `${k}: ${v}`)
      .join(", "),
  })) as Row[];
  return {
    title: "Reconciliation runs",
    blocks: [
      "<p>Each run compares the ledger with the chain over a range of final blocks. Open a run to resolve its items.</p>",
      {
        id: "reconciliations",
        caption: "Runs",
        columns: [
          { key: "id", label: "Run", href: (r) => `/console/reconciliations/${String(r.id)}` },
          { key: "chain_id", label: "Chain" },
          { key: "asset", label: "Asset" },
          { key: "blocks", label: "Blocks" },
          { key: "summary", label: "Items" },
          { key: "requested_by", label: "Requested by" },
        ],
        rows,
      },
    ],
  };
}

function resolveForm(ctx: PageCtx, runId: string, itemId: string): string {
  return `<form class="inline" method="post" action="/console/reconciliations/${e(runId)}/items/${e(itemId)}/resolve">${hidden(ctx.csrf)}
<label>Note<input name="note" required maxlength="2000"></label>
<label>Adjust: debit account<input name="debit_account_id" placeholder="optional"></label>
<label>credit account<input name="credit_account_id" placeholder="optional"></label>
<label>amount (units)<input name="amount" inputmode="numeric" pattern="[0-9]*" placeholder="optional"></label>
<button type="submit">Resolve</button></form>`;
}

export async function reconciliation(ctx: PageCtx): Promise<Page> {
  const id = ctx.params.id!;
  const status = param(ctx, "status");
  const run = await ctx.api.get(`/v1/reconciliations/${encodeURIComponent(id)}${qs({ status, limit: "500" })}`);
  // Items with an adjustment waiting for a second key: no second resolution is offered, the proposal is named.
  const open = await ctx.api.get(`/v1/proposals${qs({ status: "proposed", kind: "reconciliation_adjustment", limit: "1000" })}`);
  const waiting = new Map(
    (open.data as Record<string, unknown>[])
      .filter((p) => (p.payload as Record<string, unknown>).reconciliation_id === run.id)
      .map((p) => [String((p.payload as Record<string, unknown>).item_id), String(p.id)]),
  );
  const items = (run.items as Record<string, unknown>[]).map((i) => ({
    ...i,
    resolved_at: when(i.resolved_at as string | null),
    proposal_id: waiting.get(String(i.id)) ?? null,
  })) as Row[];
  return {
    title: `Reconciliation run ${id}`,
    blocks: [
      facts([
        ["Chain", String(run.chain_id)],
        ["Asset", String(run.asset)],
        ["Blocks", `${run.from_block as number} to ${run.to_block as number}`],
      ]),
      filterForm(ctx.path, [
        {
          name: "status",
          label: "Status",
          value: status ?? "",
          options: ["matched", "missing_on_chain", "unexpected_on_chain", "amount_mismatch", "recipient_mismatch"],
        },
      ]),
      "<p>Resolve an item with a note; with an adjusting transfer, the resolution is a proposal that another key approves (Proposals).</p>",
      {
        id: "items",
        caption: "Items",
        csvPath: `/v1/reconciliations/${encodeURIComponent(id)}${qs({ status, format: "csv" })}`,
        columns: [
          { key: "id", label: "Item" },
          { key: "status", label: "Status" },
          { key: "direction", label: "Direction" },
          { key: "payout_id", label: "Payout", href: (r) => (r.payout_id ? `/console/payouts/${String(r.payout_id)}` : null) },
          { key: "tx_hash", label: "Transaction" },
          { key: "ledger_amount_display", label: "Ledger", num: true },
          { key: "chain_amount_display", label: "Chain", num: true },
          { key: "resolution_note", label: "Resolution" },
          { key: "resolved_at", label: "Resolved" },
        ],
        rows: items,
        action: (r) =>
          r.proposal_id
            ? `Awaiting a second key's approval: <a href="/console/proposals">proposal ${e(String(r.proposal_id))}</a>`
            : r.resolved_at || r.status === "matched"
              ? ""
              : resolveForm(ctx, id, String(r.id)),
      },
    ],
  };
}
