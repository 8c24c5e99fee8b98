import { describe, expect, it } from "vitest";
import { wideRange } from "../support/clock.js";
import { worldPerFile } from "../support/http.js";

/**
 * Forged list cursors: the rule is a 400 naming `cursor` ("cursor is not one this API
 * returned"), never a 500: a cursor of the right shape whose position does not fit a bigint, or whose
 * date is not a date, used to reach PostgreSQL and fail there.
 */
const t = worldPerFile();
const b64 = (s: string) => Buffer.from(s).toString("base64url");
const TOO_BIG = "9999999999999999999"; // 19 digits: matches [0-9]{1,19}, but > 2^63 - 1
const UUID = "01936a4e-8f2a-7c3b-9d4e-5f6a7b8c9d0e";

const cases: Array<[string, "m1" | "o1", () => string]> = [
  ["account entries, e:<19 digits>", "m1", () => `/v1/accounts/${t.w.m1Customer.id}/entries?cursor=${b64(`e:${TOO_BIG}`)}`],
  ["operator statement, s:<19 digits>", "o1", () => `/v1/operators/o1/statement?${wideRange()}&cursor=${b64(`s:${TOO_BIG}`)}`],
  ["customer statement, c:<19 digits>:<asset>", "m1", () => `/v1/customers/c1/statement?${wideRange()}&cursor=${b64(`c:${TOO_BIG}:${t.w.asset.id}`)}`],
  ["capacity flags, month 13", "m1", () => `/v1/marketplaces/m1/capacity-flags?cursor=${b64(`f:2026-13-45T99:99:99.999Z|${UUID}`)}`],
  ["capacity flags, year 0000", "m1", () => `/v1/marketplaces/m1/capacity-flags?cursor=${b64(`f:0000-01-01T00:00:00.000Z|${UUID}`)}`],
  ["capacity flags, id of 36 dashes", "m1", () => `/v1/marketplaces/m1/capacity-flags?cursor=${b64(`f:2026-01-01T00:00:00.000Z|${"-".repeat(36)}`)}`],
];

describe("a forged cursor is a 400 naming cursor, not a 500", () => {
  for (const [label, as, path] of cases) {
    it(label, async () => {
      const res = await t.api.call("GET", path(), { key: t.w.keys[as] });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ code: "invalid_request", errors: [{ path: "cursor" }] });
    });
  }
});
