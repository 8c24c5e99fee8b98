import { describe, expect, it } from "vitest";
import { testClock, usageMonth } from "../support/clock.js";
import { expectRefused, expectStatus, worldPerFile } from "../support/http.js";

/**
 * Utilisation and revenue per available unit-hour (docs/usage.md): worked out here from the posted
 * usage and the declared capacity, independently of the service, with exact integers (a figure in
 * smallest units, or a fraction scaled by 10^6, each rounded down once).
 */
const t = worldPerFile();
const H = 3_600_000;
const RES = "gpu:econ";
const day5 = usageMonth.day(0, 5).getTime();
const at = (hours: number) => new Date(day5 + hours * H).toISOString();
const MS_PER_UNIT_HOUR = BigInt(H);

/** The world's fee schedule: 10% marketplace, 1% protocol, each rounded down; the operator keeps the rest. */
const netOf = (gross: bigint) => gross - (gross * 1000n) / 10_000n - (gross * 100n) / 10_000n;
const six = (num: bigint, den: bigint) => {
  const v = (num * 1_000_000n) / den;
  return `${v / 1_000_000n}${v % 1_000_000n === 0n ? "" : "." + (v % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "")}`;
};

describe("operator economics", () => {
  it("$3/h at 25% earns less per available hour than $1.50/h at 70%", async () => {
    const { keys } = t.w;
    // 4 units for the 5th only; then nothing until 2 units from the 6th at noon on.
    for (const body of [
      { resource: RES, units: 4, effective_from: at(0), until: at(24) },
      { resource: RES, units: 2, effective_from: at(36) },
    ])
      expectStatus(await t.api.call("POST", "/v1/operators/o1/capacity", { key: keys.o1, body }), 201);
    const post = async (id: string, from: number, to: number, quantity: string, price: string) =>
      expectStatus(
        await t.api.call("POST", "/v1/usage", {
          key: keys.m1,
          body: t.w.usage(id, { resource: RES, unit: "gpu_hour", quantity, unit_price: price, period_start: at(from), period_end: at(to) }),
        }),
        201,
      );
    await post("econ-a", 0, 23, "24", "3"); // the 5th: 24 of 96 unit-hours at 3 USDC
    await post("econ-b", 36, 47, "16.8", "1.5"); // the 6th: 16.8 of 24 unit-hours (2 units from noon) at 1.50 USDC

    const from = new Date(day5).toISOString();
    const to = new Date(day5 + 48 * H).toISOString();
    const res = expectStatus(
      await t.api.call("GET", `/v1/operators/o1/earnings?from=${from}&to=${to}&group_by=day&by_resource=true`, { key: keys.o1 }),
      200,
    ).body;
    const rows = res.data.filter((r: { resource: string }) => r.resource === RES);
    const expected = [
      { day: from.slice(0, 10), availableUnitMs: 4n * 24n * MS_PER_UNIT_HOUR, paidUnitMs: 24n * MS_PER_UNIT_HOUR, gross: 72_000_000n },
      {
        day: new Date(day5 + 24 * H).toISOString().slice(0, 10),
        availableUnitMs: 2n * 12n * MS_PER_UNIT_HOUR,
        paidUnitMs: (168n * MS_PER_UNIT_HOUR) / 10n,
        gross: 25_200_000n,
      },
    ];
    expect(rows).toHaveLength(2);
    for (const [i, e] of expected.entries()) {
      const net = netOf(e.gross);
      const perAvailable = (net * MS_PER_UNIT_HOUR) / e.availableUnitMs;
      expect(rows[i]).toMatchObject({
        group: e.day,
        resource: RES,
        net: net.toString(),
        available_unit_hours: six(e.availableUnitMs, MS_PER_UNIT_HOUR),
        utilisation: six(e.paidUnitMs, e.availableUnitMs),
        effective_rate_per_hour_units: ((net * MS_PER_UNIT_HOUR) / e.paidUnitMs).toString(),
        net_per_available_unit_hour_units: perAvailable.toString(),
      });
    }
    // The figures of docs/usage.md: 25% and 70%; after fees 0.6675 and 0.9345 USDC per available GPU-hour.
    expect(rows.map((r: { utilisation: string }) => r.utilisation)).toEqual(["0.25", "0.7"]);
    expect(rows.map((r: { net_per_available_unit_hour: string }) => r.net_per_available_unit_hour)).toEqual(["0.6675", "0.9345"]);
    // Rows not per resource (or of a resource without capacity) have no capacity to compare with.
    const plain = expectStatus(await t.api.call("GET", `/v1/operators/o1/earnings?from=${from}&to=${to}&group_by=day`, { key: keys.o1 }), 200).body;
    expect(plain.data.every((r: { available_unit_hours: null; resource: null }) => r.available_unit_hours === null && r.resource === null)).toBe(true);
  });

  it("by month: the capacity of the whole month up to now, with the change of capacity inside it", async () => {
    const { keys } = t.w;
    const q = `from=${usageMonth.from.toISOString()}&to=${usageMonth.to.toISOString()}&group_by=month&by_resource=true`;
    const res = expectStatus(await t.api.call("GET", `/v1/operators/o1/earnings?${q}`, { key: keys.o1 }), 200).body;
    const row = res.data.find((r: { resource: string }) => r.resource === RES);
    // 4 units × 24 h, then 2 units from the 6th at noon to the month's end (the month lies in the past).
    const end = Math.min(usageMonth.to.getTime(), testClock.now().getTime());
    const available = 4n * 24n * MS_PER_UNIT_HOUR + 2n * BigInt(end - (day5 + 36 * H));
    const paid = (408n * MS_PER_UNIT_HOUR) / 10n; // 24 + 16.8 unit-hours
    const net = netOf(72_000_000n) + netOf(25_200_000n);
    expect(row).toMatchObject({
      group: usageMonth.label,
      available_unit_hours: six(available, MS_PER_UNIT_HOUR),
      utilisation: six(paid, available),
      net_per_available_unit_hour_units: ((net * MS_PER_UNIT_HOUR) / available).toString(),
    });
    // The CSV carries the same figures in columns of their own, after the old ones.
    const csv = await t.api.call("GET", `/v1/operators/o1/earnings?${q}&format=csv`, { key: keys.o1 });
    const [header, ...lines] = (csv.body as string).trim().split(/\r?\n/);
    expect(header!.split(",").slice(-5)).toEqual([
      "resource",
      "available_unit_hours",
      "utilisation",
      "net_per_available_unit_hour",
      "net_per_available_unit_hour_units",
    ]);
    expect(lines.some((l) => l.includes(RES) && l.includes(six(paid, available)))).toBe(true);
  });

  it("weeks are named by their Monday; bad grouping is refused", async () => {
    const { keys } = t.w;
    const q = `from=${usageMonth.from.toISOString()}&to=${usageMonth.to.toISOString()}`;
    const res = expectStatus(await t.api.call("GET", `/v1/operators/o1/earnings?${q}&group_by=week&by_resource=true`, { key: keys.o1 }), 200).body;
    for (const r of res.data) expect(new Date(`${r.group}T00:00:00Z`).getUTCDay()).toBe(1);
    await expectRefused(t.api, () => t.api.call("GET", `/v1/operators/o1/earnings?${q}&group_by=year`, { key: keys.o1 }), 400, "invalid_request", "group_by");
    await expectRefused(
      t.api,
      () => t.api.call("GET", `/v1/operators/o1/earnings?${q}&by_resource=yes`, { key: keys.o1 }),
      400,
      "invalid_request",
      "by_resource",
    );
    // Another operator's economics are not its to read.
    await expectRefused(t.api, () => t.api.call("GET", `/v1/operators/o1/earnings?${q}&by_resource=true`, { key: keys.o2 }), 404, "operator_not_found");
  });
});
