import { describe, expect, it } from "vitest";
import { usageMonth } from "../support/clock.js";
import { expectRefused, expectStatus, worldPerFile } from "../support/http.js";

/**
 * Capacity (docs/usage.md, "Capacity"): usage of an operator and resource may not claim more
 * unit-hours than its declared capacity holds over a record's period, counting its usage in every
 * marketplace. Expected figures are worked out here from the rule, in exact unit-milliseconds.
 */
const t = worldPerFile();
const H = 3_600_000;
const RES = "gpu:cap-a";
// The 3rd of the fixtures' month, 00:00 UTC: the operator's 2 units start then.
const D = usageMonth.day(0, 3).getTime();
const at = (hours: number) => new Date(D + hours * H).toISOString();

let n = 0;
const record = (from: number, to: number, seconds: string, extra: Record<string, unknown> = {}) =>
  t.w.usage(`cap-${++n}`, { resource: RES, quantity: seconds, period_start: at(from), period_end: at(to), ...extra });
const post = (key: string, body: unknown) => t.api.call("POST", "/v1/usage", { key, body });

describe("capacity across marketplaces", () => {
  it("o1 sells through m1 and m2; it declares 2 units of a resource, and the two marketplaces' usage shares them", async () => {
    const { keys } = t.w;
    // An admin links o1 to m2 as well.
    expectStatus(await t.api.call("POST", "/v1/operators", { body: { id: "o1", name: "operator o1", marketplace_id: "m2" } }), 201);
    const v1 = expectStatus(
      await t.api.call("POST", "/v1/operators/o1/capacity", { key: keys.o1, body: { resource: RES, units: 2, effective_from: at(0) } }),
      201,
    ).body;
    expect(v1).toMatchObject({ operator_id: "o1", resource: RES, version: 1, units: 2, effective_from: at(0), until: null });

    // [0h, 1h) holds 2 unit-hours. m1: 1.5 of them (5,400 gpu-seconds).
    expectStatus(await post(keys.m1, record(0, 1, "5400")), 201);
    // m2 asks for 0.75: only 0.5 are free, across both marketplaces.
    const refused = await expectRefused(t.api, () => post(keys.m2, record(0, 1, "2700")), 422, "capacity_exceeded", "quantity");
    expect(refused.body.detail).toContain("so 0.5 are free, less than the 0.75 this record claims");
    // Exactly what is free is accepted.
    expectStatus(await post(keys.m2, record(0, 1, "1800")), 201);
    // Full now: one more gpu-second anywhere in [0h, 1h) is refused, from either marketplace.
    await expectRefused(t.api, () => post(keys.m1, record(0.5, 1, "1")), 422, "capacity_exceeded");
  });

  it("prorates stored usage over the part of its period that overlaps the record's", async () => {
    const { keys } = t.w;
    // [0.5h, 1.5h) holds 2 unit-hours; the records of [0h, 1h) hold half of theirs in it: (1.5 + 0.5) / 2 = 1.
    await expectRefused(t.api, () => post(keys.m1, record(0.5, 1.5, "3601")), 422, "capacity_exceeded");
    expectStatus(await post(keys.m1, record(0.5, 1.5, "3600")), 201);
  });

  it("a change of capacity mid-period: the record's capacity is the integral of the units over its period", async () => {
    const { keys } = t.w;
    // Version 2: 4 units from 2h until 3h; after 3h nothing is declared (0 units).
    expectStatus(await t.api.call("POST", "/v1/operators/o1/capacity", { body: { resource: RES, units: 4, effective_from: at(2), until: at(3) } }), 201);
    // [1.5h, 2.5h): 2 units for 0.5 h and 4 for 0.5 h = 3 unit-hours; the [0.5h, 1.5h) record ends where it starts.
    await expectRefused(t.api, () => post(keys.m2, record(1.5, 2.5, "10801")), 422, "capacity_exceeded");
    expectStatus(await post(keys.m2, record(1.5, 2.5, "10800")), 201);
    // After `until`: no capacity at all.
    const none = await expectRefused(t.api, () => post(keys.m1, record(3, 4, "1")), 422, "capacity_exceeded");
    expect(none.body.detail).toContain("so 0 are free");
    const versions = expectStatus(await t.api.call("GET", "/v1/operators/o1/capacity", { key: keys.o1 }), 200).body.data;
    expect(versions.map((v: { version: number; units: number }) => [v.version, v.units])).toEqual([
      [1, 2],
      [2, 4],
    ]);
    // The same instant twice is a conflict: versions are never changed.
    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/operators/o1/capacity", { key: keys.o1, body: { resource: RES, units: 9, effective_from: at(2) } }),
      409,
      "capacity_exists",
    );
  });

  it("a batch counts its own earlier records: the second of two that together exceed is rejected", async () => {
    const { keys } = t.w;
    // [4h... is after until: declare 1 unit again from 5h.
    expectStatus(await t.api.call("POST", "/v1/operators/o1/capacity", { key: keys.o1, body: { resource: RES, units: 1, effective_from: at(5) } }), 201);
    const res = expectStatus(
      await t.api.call("POST", "/v1/usage/batch", { key: keys.m1, body: { records: [record(5, 6, "2000"), record(5, 6, "2000"), record(5, 6, "1600")] } }),
      200,
    ).body;
    expect(res.results.map((r: { status: string; code?: string }) => r.code ?? r.status)).toEqual(["accepted", "capacity_exceeded", "accepted"]);
  });

  it("a reversed record frees its capacity", async () => {
    const { keys } = t.w;
    const r = expectStatus(await post(keys.m1, record(6, 7, "3600")), 201).body;
    await expectRefused(t.api, () => post(keys.m2, record(6, 7, "1")), 422, "capacity_exceeded");
    expectStatus(await t.api.call("POST", `/v1/usage/${r.id}/reverse`, { key: keys.m1, body: { reason: "meter fault" } }), 201);
    expectStatus(await post(keys.m2, record(6, 7, "3600")), 201);
  });

  it("a marketplace that prefers it accepts usage beyond capacity flagged for review, per resource", async () => {
    const { keys } = t.w;
    const policy = expectStatus(
      await t.api.call("PUT", "/v1/marketplaces/m2/capacity-policy", { key: keys.m2, body: { default: "refuse", resources: { [RES]: "flag" } } }),
      200,
    ).body;
    expect(policy).toMatchObject({ marketplace_id: "m2", default: "refuse", resources: { [RES]: "flag" } });
    const flagged = expectStatus(await post(keys.m2, record(0, 1, "360")), 201).body;
    // m1's policy is still to refuse.
    await expectRefused(t.api, () => post(keys.m1, record(0, 1, "360")), 422, "capacity_exceeded");
    const flags = expectStatus(await t.api.call("GET", "/v1/marketplaces/m2/capacity-flags", { key: keys.m2 }), 200).body;
    expect(flags.data).toHaveLength(1);
    // [0h, 1h): 2 unit-hours; 1.5 + 0.5 held there, and half of the [0.5h, 1.5h) record: 2.5 (flagged before). The record claims 0.1.
    expect(flags.data[0]).toMatchObject({
      usage_id: flagged.id,
      operator_id: "o1",
      resource: RES,
      capacity_unit_hours: "2",
      used_unit_hours: "2.5",
      claimed_unit_hours: "0.1",
    });
    // Another marketplace's flags are not its to read.
    await expectRefused(t.api, () => t.api.call("GET", "/v1/marketplaces/m2/capacity-flags", { key: keys.m1 }), 404, "marketplace_not_found");
  });

  it("operators without declared capacity, other resources, and usage before the first declaration keep today's behaviour", async () => {
    const { keys } = t.w;
    // o1's world resource has no capacity: 10 GPUs for an hour pass.
    expectStatus(await post(keys.m1, t.w.usage(`free-${++n}`, { quantity: "36000", period_start: at(0), period_end: at(1) })), 201);
    // A period that starts before the declaration's effective_from is not checked.
    expectStatus(await post(keys.m1, record(-1, 0.5, "36000")), 201);
  });

  it("only the operator itself or an admin declares capacity; marketplaces and other operators cannot, and a refusal writes nothing", async () => {
    const { keys } = t.w;
    const body = { resource: RES, units: 100, effective_from: at(10) };
    await expectRefused(t.api, () => t.api.call("POST", "/v1/operators/o1/capacity", { key: keys.m1, body }), 403, "forbidden");
    await expectRefused(t.api, () => t.api.call("POST", "/v1/operators/o1/capacity", { key: keys.o2, body }), 404, "operator_not_found");
    await expectRefused(t.api, () => t.api.call("GET", "/v1/operators/o1/capacity", { key: keys.o2 }), 404, "operator_not_found");
    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/operators/o1/capacity", { key: keys.o1, body: { ...body, units: -1 } }),
      400,
      "invalid_request",
      "units",
    );
    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/operators/o1/capacity", { key: keys.o1, body: { ...body, until: at(9) } }),
      400,
      "invalid_request",
      "until",
    );
    await expectRefused(
      t.api,
      () => t.api.call("POST", "/v1/operators/o1/capacity", { key: keys.o1, body: { ...body, resource: "GPU H100" } }),
      400,
      "invalid_request",
      "resource",
    );
    await expectRefused(
      t.api,
      () => t.api.call("PUT", "/v1/marketplaces/m1/capacity-policy", { key: keys.m2, body: { default: "flag" } }),
      404,
      "marketplace_not_found",
    );
  });
});
