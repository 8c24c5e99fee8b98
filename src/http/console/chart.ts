import { display } from "../display.js";
import { escapeHtml as e } from "../html.js";

/**
 * Line charts drawn on the server as SVG (no script, no library to ship). Amounts arrive as the
 * API's integer strings and stay bigints: every label and tooltip is `display(units, scale)`,
 * exact. Only the pixel position is a float, the point's share of the axis. Each point carries
 * its values in data-* attributes (the browser tests read them) and a <title> (a tooltip, read out
 * by screen readers); the table beside each chart holds the same numbers.
 */

export interface ChartPoint {
  /** The category on the x axis (a day, a week). */
  x: string;
  /** The amount in the asset's smallest units, as the API's integer string. */
  units: string;
}

export interface ChartSeries {
  name: string;
  points: ChartPoint[];
}

export interface ChartSpec {
  id: string;
  title: string;
  /** What the y axis counts, e.g. "USDC per GPU-hour". */
  unitLabel: string;
  scale: number;
  series: ChartSeries[];
}

const W = 720;
const H = 300;
const PAD = { left: 90, right: 16, top: 16, bottom: 56 };
// Distinguishable in colour and in marker shape (not by colour alone); each at least 4.5:1 on white.
const COLOURS = ["#1f4e9c", "#b3261e", "#1b6e3a", "#7a3e9d", "#8a5a00", "#006d77"];

/** The y position's share of the axis, 0..1, computed from bigints (exact to 1/10⁶ of the axis). */
function share(units: bigint, max: bigint): number {
  if (max <= 0n) return 0;
  return Number((units * 1_000_000n) / max) / 1_000_000;
}

function marker(i: number, x: number, y: number, attrs: string): string {
  const c = COLOURS[i % COLOURS.length]!;
  if (i % 2 === 1) return `<rect x="${(x - 4).toFixed(1)}" y="${(y - 4).toFixed(1)}" width="8" height="8" fill="${c}" ${attrs}`;
  return `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="4.5" fill="${c}" ${attrs}`;
}

function axes(categories: string[], max: bigint, spec: ChartSpec, xAt: (i: number) => number, yAt: (u: bigint) => number): string {
  const ticks = [0n, 1n, 2n, 3n, 4n].map((k) => (max * k) / 4n);
  const y = ticks
    .map(
      (t) => `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${yAt(t).toFixed(1)}" y2="${yAt(t).toFixed(1)}" stroke="#ddd"/>
<text x="${PAD.left - 6}" y="${(yAt(t) + 4).toFixed(1)}" text-anchor="end" font-size="11">${e(display(t, spec.scale))}</text>`,
    )
    .join("");
  const every = Math.max(1, Math.ceil(categories.length / 8));
  const x = categories
    .map((cat, i) =>
      i % every === 0
        ? `<text x="${xAt(i).toFixed(1)}" y="${H - PAD.bottom + 16}" text-anchor="middle" font-size="11">${e(cat.slice(5, 10) || cat)}</text>`
        : "",
    )
    .join("");
  return `${y}${x}<line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${H - PAD.bottom}" stroke="#333"/>
<text x="12" y="${PAD.top + (H - PAD.top - PAD.bottom) / 2}" font-size="11" transform="rotate(-90 12 ${PAD.top + (H - PAD.top - PAD.bottom) / 2})" text-anchor="middle">${e(spec.unitLabel)}</text>`;
}

export function lineChart(spec: ChartSpec): string {
  const categories = [...new Set(spec.series.flatMap((s) => s.points.map((p) => p.x)))].sort();
  if (categories.length === 0) return `<figure id="${e(spec.id)}"><figcaption>${e(spec.title)}</figcaption><p>No data in this period.</p></figure>`;
  let max = 0n;
  for (const s of spec.series) for (const p of s.points) if (BigInt(p.units) > max) max = BigInt(p.units);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const xAt = (i: number) => PAD.left + (categories.length === 1 ? plotW / 2 : (plotW * i) / (categories.length - 1));
  const yAt = (u: bigint) => PAD.top + plotH * (1 - share(u, max));
  const lines = spec.series.map((s, i) => {
    const pts = [...s.points].sort((a, b) => a.x.localeCompare(b.x)).map((p) => ({ ...p, cx: xAt(categories.indexOf(p.x)), cy: yAt(BigInt(p.units)) }));
    const path = pts.map((p, k) => `${k === 0 ? "M" : "L"}${p.cx.toFixed(1)},${p.cy.toFixed(1)}`).join(" ");
    const dots = pts
      .map((p) =>
        marker(
          i,
          p.cx,
          p.cy,
          `class="point" data-series="${e(s.name)}" data-x="${e(p.x)}" data-units="${e(p.units)}"><title>${e(`${s.name}, ${p.x}: ${display(p.units, spec.scale)} ${spec.unitLabel}`)}</title></${i % 2 === 1 ? "rect" : "circle"}>`,
        ),
      )
      .join("");
    return `<g><path d="${path}" fill="none" stroke="${COLOURS[i % COLOURS.length]}" stroke-width="2"${i % 2 === 1 ? ' stroke-dasharray="6 3"' : ""}/>${dots}</g>`;
  });
  const legend = spec.series
    .map(
      (s, i) =>
        `<g transform="translate(${PAD.left + i * 170},${H - 18})">${marker(i, 0, -4, `></${i % 2 === 1 ? "rect" : "circle"}>`)}<text x="10" y="0" font-size="12">${e(s.name)}</text></g>`,
    )
    .join("");
  const titleId = `${spec.id}-title`;
  return `<figure id="${e(spec.id)}"><figcaption id="${e(titleId)}">${e(spec.title)}</figcaption>
<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${e(titleId)}" xmlns="http://www.w3.org/2000/svg">
${axes(categories, max, spec, xAt, yAt)}${lines.join("")}${legend}</svg></figure>`;
}
