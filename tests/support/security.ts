import { expect } from "vitest";
import type { Role } from "../../src/domain/access.js";
import type { ApiResponse, CallOptions, TestApi, world } from "./http.js";

export type World = Awaited<ReturnType<typeof world>>;
type KeyName = keyof World["keys"];

export interface RouteSecurity {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The path as the OpenAPI document names it, e.g. /v1/accounts/{id}. */
  route: string;
  allowed: Role[];
  /** Roles that are not allowed and get 404 as if the resource did not exist (an operator's private costs: marketplaces). */
  hidden?: Role[];
  /** A request this route accepts from `as` (a key of that tenant) about that tenant's own data. */
  request(w: World, as: KeyName): Promise<{ path: string } & CallOptions> | ({ path: string } & CallOptions);
  /** A request by `as` about another tenant's data, which must look exactly like a missing resource. */
  otherTenant?: (w: World) => Array<{ as: KeyName; path: string } & CallOptions>;
}

const keyOfRole: Record<Role, KeyName[]> = { admin: ["admin"], finance: ["finance"], marketplace: ["m1"], operator: ["o1"] };

/**
 * The shared security checks, run against one route: no key and a bad key get 401; each role that
 * is not allowed gets 403; another tenant's resource gets 404 (never 403, so ids cannot be probed);
 * an allowed role on its own data gets through.
 */
export async function checkRouteSecurity(api: TestApi, w: World, spec: RouteSecurity): Promise<void> {
  const call = async (as: KeyName | null, key?: string): Promise<ApiResponse> => {
    const { path, ...options } = await spec.request(w, as ?? "admin");
    return api.call(spec.method, path, { ...options, key: key ?? (as === null ? null : w.keys[as]) });
  };
  const label = `${spec.method} ${spec.route}`;

  const anonymous = await call(null);
  expect(anonymous.status, `${label} without a key`).toBe(401);
  expect(anonymous.headers.get("content-type"), label).toMatch(/problem\+json/);
  expect((await call("admin", "lk_0000000000000000_" + "A".repeat(43))).status, `${label} with an unknown key`).toBe(401);

  for (const role of ["admin", "finance", "marketplace", "operator"] as Role[]) {
    for (const as of keyOfRole[role]) {
      const res = await call(as);
      if (spec.allowed.includes(role)) {
        expect([401, 403, 404], `${label} as ${role}: ${JSON.stringify(res.body)}`).not.toContain(res.status);
        expect(res.status, `${label} as ${role}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
      } else if (spec.hidden?.includes(role)) {
        expect(res.status, `${label} as ${role} must look absent`).toBe(404);
        expect(res.body.code).toMatch(/not_found$/);
      } else {
        expect(res.status, `${label} as ${role} must be forbidden`).toBe(403);
        expect(res.body.code).toBe("forbidden");
      }
    }
  }

  for (const { as, path, ...options } of spec.otherTenant?.(w) ?? []) {
    const res = await api.call(spec.method, path, { ...options, key: w.keys[as] });
    expect(res.status, `${label} as ${as} on another tenant's data: ${JSON.stringify(res.body)}`).toBe(404);
    expect(res.body.code, label).toMatch(/not_found$/);
  }
}
