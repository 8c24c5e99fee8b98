import { randomUUID } from "node:crypto";

/**
 * The console reads and writes only through the service's own API, called in-process with the
 * session's key as the Bearer token: the API's roles, tenancy, listener rules, validation,
 * four-eyes and audit log apply to the console exactly as to any other client.
 */

/** What the console calls: the app's fetch (Hono's `app.request`). */
export type ApiFetch = (path: string, init: RequestInit) => Response | Promise<Response>;

export interface ApiAnswer {
  status: number;
  ok: boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON, read per page
  body: any;
  /** The raw text (CSV answers). */
  text: string;
  headers: Headers;
}

/** A problem+json answer as the console shows it. */
export interface Problem {
  status: number;
  title: string;
  detail: string;
  code: string;
  errors: { path: string; message: string }[];
}

export class ConsoleApi {
  constructor(
    private readonly fetch: ApiFetch,
    private readonly apiKey: string,
    private readonly requestId?: string,
  ) {}

  async call(method: "GET" | "POST" | "PUT", path: string, body?: unknown, idempotencyKey?: string): Promise<ApiAnswer> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, accept: "application/json" };
    if (this.requestId) headers["x-request-id"] = this.requestId;
    if (body !== undefined) headers["content-type"] = "application/json";
    if (method === "POST") headers["idempotency-key"] = idempotencyKey ?? randomUUID();
    const res = await this.fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let parsed: unknown = null;
    if ((res.headers.get("content-type") ?? "").includes("json")) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
    }
    return { status: res.status, ok: res.ok, body: parsed, text, headers: res.headers };
  }

  /** GET, answering the JSON body or throwing the API's problem (shown as the page). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON, read per page
  async get(path: string): Promise<any> {
    const res = await this.call("GET", path);
    if (!res.ok) throw new ProblemAnswer(problemOf(res));
    return res.body;
  }
}

/** A refusal of the API, carried to the page that shows it. */
export class ProblemAnswer extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail);
  }
}

export function problemOf(res: ApiAnswer): Problem {
  const b = (res.body ?? {}) as Partial<Problem>;
  return {
    status: res.status,
    title: typeof b.title === "string" ? b.title : `HTTP ${res.status}`,
    detail: typeof b.detail === "string" ? b.detail : "",
    code: typeof b.code === "string" ? b.code : "error",
    errors: Array.isArray(b.errors) ? b.errors : [],
  };
}

/** A query string of the defined, non-empty values. */
export function qs(params: Record<string, string | undefined | null>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : "";
}
