import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertProposal } from "../../src/db/queries/proposals.js";
import { PROPOSAL_KINDS, proposalConcerns, type ProposalParty } from "../../src/domain/proposals.js";
import { uuidv7 } from "../../src/domain/ids.js";
import { expectStatus, testApi, world, type TestApi } from "../support/http.js";

let api: TestApi;
let keys: Record<string, string>;
beforeAll(async () => {
  api = await testApi();
  keys = (await world(api)).keys as unknown as Record<string, string>;
  // Every kind, for every party (and for none), some decided.
  let i = 0;
  for (const kind of PROPOSAL_KINDS)
    for (const m of ["m1", "m2", null])
      for (const o of ["o1", "o2", null]) {
        const payload: Record<string, unknown> = { n: ++i };
        if (o) payload.operator_id = o;
        if (m) payload.marketplace_id = m;
        await insertProposal(api.db, { id: uuidv7(), kind, marketplaceId: m, payload, proposedBy: "k", proposedAt: new Date() });
      }
  await api.db.query("update proposals set status = 'rejected', decided_by = 'k2', decided_at = now() where (payload->>'n')::int % 3 = 0");
}, 120_000);
afterAll(async () => api?.close());

const parties: Record<string, ProposalParty> = {
  m1: { role: "marketplace", id: "m1" },
  m2: { role: "marketplace", id: "m2" },
  o1: { role: "operator", id: "o1" },
  o2: { role: "operator", id: "o2" },
};

async function all(): Promise<{ id: string; kind: string; marketplace_id: string | null; payload: Record<string, unknown>; status: string }[]> {
  return api.db.query("select id, kind, marketplace_id, payload, status from proposals order by id desc");
}

async function listAll(key: string, query: string, limit: number, start: string | null = null): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = start;
  for (let pages = 0; pages < 500; pages++) {
    const res = expectStatus(await api.call("GET", `/v1/proposals?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ""}`, { key }), 200).body;
    ids.push(...res.data.map((p: { id: string }) => p.id));
    cursor = res.next_cursor;
    if (!cursor) return ids;
  }
  throw new Error("endless");
}

/**
 * The proposals a marketplace or operator key reads (docs/api.md, "One person against everyone"):
 * every kind, for every party and for none, some decided; each tenant key gets exactly the ones
 * proposalConcerns says are about its party, one by one (another's: 404) and listed with every
 * filter, page by page.
 */
describe("the proposals a tenant reads", () => {
  it("list (every filter, paged) and get match proposalConcerns exactly", async () => {
    const rows = await all();
    for (const [who, party] of Object.entries(parties)) {
      const mine = rows.filter((r) => proposalConcerns(party, { kind: r.kind, marketplaceId: r.marketplace_id, payload: r.payload }));
      expect(mine.length).toBeGreaterThan(0);
      for (const r of rows) {
        const res = await api.call("GET", `/v1/proposals/${r.id}`, { key: keys[who] });
        expect(res.status, `${who} get ${r.kind} m=${r.marketplace_id} o=${r.payload.operator_id}`).toBe(mine.includes(r) ? 200 : 404);
      }
      const queries: [string, (r: (typeof rows)[number]) => boolean][] = [
        ["", () => true],
        ["&status=proposed", (r) => r.status === "proposed"],
        ["&status=rejected", (r) => r.status === "rejected"],
        ["&marketplace_id=m1", (r) => r.marketplace_id === "m1"],
        ["&marketplace_id=m2", (r) => r.marketplace_id === "m2"],
        ...PROPOSAL_KINDS.map((k) => [`&kind=${k}`, (r: (typeof rows)[number]) => r.kind === k] as [string, (r: (typeof rows)[number]) => boolean]),
      ];
      for (const [q, f] of queries) {
        for (const limit of [1, 2, 100]) {
          expect(await listAll(keys[who]!, q, limit), `${who} ${q} limit ${limit}`).toEqual(mine.filter(f).map((r) => r.id));
        }
      }
      // A cursor of its own choosing only moves the window over its own.
      const cut = rows[Math.floor(rows.length / 2)]!.id;
      expect(await listAll(keys[who]!, "", 5, cut)).toEqual(mine.filter((r) => r.id < cut).map((r) => r.id));
    }
  }, 300_000);
});
