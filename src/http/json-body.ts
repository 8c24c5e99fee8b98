import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./request-context.js";
import { ApiError } from "./problem.js";

const MAX_DEPTH = 32;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Route middleware for every operation that takes a JSON body, run after the role check. It
 * refuses, before anything else looks at the body: a media type other than JSON (415), a
 * content encoding (415), bytes that are not UTF-8, nesting deeper than 32 levels (which would
 * exhaust the stack of recursive code further on), strings that are not well-formed Unicode (lone
 * surrogates, which PostgreSQL cannot store), NUL characters (which it cannot store either: a 400
 * naming the field), `__proto__` keys (which JavaScript objects drop silently), and numbers that
 * would not keep their value through parsing (beyond ±1.8e308, whole numbers beyond ±(2^53 − 1),
 * non-zero numbers below the smallest double, which read as 0): stored as parsed, they would not
 * be what was sent. A request without a body passes: operations whose body is optional treat it as {}.
 */
export const jsonBodyGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
  const type = c.req.header("content-type");
  const length = c.req.header("content-length");
  const declaresBody = (length !== undefined && length !== "0") || c.req.header("transfer-encoding") !== undefined;
  if (type === undefined || type.trim() === "") {
    if (declaresBody) throw new ApiError("unsupported_media_type", "send the body with 'Content-Type: application/json'");
    return next();
  }
  const media = type.split(";")[0]!.trim().toLowerCase();
  if (media !== "application/json") throw new ApiError("unsupported_media_type", `send the body as 'Content-Type: application/json' (got '${media}')`);
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type)?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    throw new ApiError("unsupported_media_type", `JSON bodies are UTF-8 (got charset=${charset})`);
  }
  const encoding = c.req.header("content-encoding");
  if (encoding !== undefined && encoding.trim().toLowerCase() !== "identity") {
    throw new ApiError("unsupported_media_type", `compressed bodies are not accepted (Content-Encoding: ${encoding})`);
  }
  const bytes = await c.req.arrayBuffer();
  if (bytes.byteLength === 0) return next();
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new ApiError("malformed_json", "the body is not valid UTF-8");
  }
  if (nestingDepth(text) > MAX_DEPTH) throw new ApiError("invalid_request", `the body nests more than ${MAX_DEPTH} levels deep`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ApiError("malformed_json", `the body is not valid JSON: ${whereJsonBreaks(text, (err as Error).message)}`);
  }
  // One walk over the parsed body (cheaper than a JSON.parse reviver, which V8 runs slowly).
  const found = checkStrings(parsed, text.includes("\\u0000"));
  if (found.problem !== undefined) throw found.problem;
  if (found.inexact) throw inexactNumber(parsed);
  // A literal below the smallest double (5e-324) reads as 0: it needs a negative exponent of three
  // digits or more, or 200 zeros or more after the point (with an exponent of two digits at most,
  // anything else is at least 1e-300).
  if (/[eE]-\d{3}|\.0{200}/.test(text)) {
    const zero = underflowingLiteral(text);
    if (zero !== undefined) throw numberProblem("body", `the number ${zero.literal} at line ${zero.line}, column ${zero.column} reads as 0`);
  }
  // PostgreSQL stores no NUL character in text or jsonb: refused here, naming where it is.
  if (found.nulAt !== undefined) {
    const path = found.nulAt === "" ? "body" : found.nulAt;
    throw new ApiError("invalid_request", `${path}: must not contain a NUL character (\\u0000)`, [
      { path, message: "must not contain a NUL character (\\u0000)" },
    ]);
  }
  // The route's validator reads the body through c.req.json(): it gets this parse instead of a second one.
  c.req.json = (() => Promise.resolve(parsed)) as typeof c.req.json;
  return next();
};

/**
 * Checks every string and field name of a parsed body: a `__proto__` key or a string that is not
 * well-formed Unicode is a problem (the first found); with `nul`, also the path of the first
 * string or field name holding a NUL character.
 */
function checkStrings(value: unknown, nul: boolean): { problem?: ApiError; nulAt?: string; inexact?: boolean } {
  const out: { problem?: ApiError; nulAt?: string; inexact?: boolean } = {};
  // Paths are only spelt out while a NUL is still being looked for (a large body has many).
  const seeking = () => nul && out.nulAt === undefined;
  const join = (at: string, k: string) => (!seeking() ? "" : at === "" ? k : `${at}.${k}`);
  const visit = (v: unknown, at: string): void => {
    if (out.problem) return;
    if (typeof v === "string") {
      if (!v.isWellFormed()) out.problem = notWellFormed();
      else if (seeking() && v.includes("\u0000")) out.nulAt = at;
      return;
    }
    if (typeof v === "number") {
      if (!exact(v)) out.inexact = true;
      return;
    }
    if (v === null || typeof v !== "object") return;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) visit(v[i], join(at, String(i)));
      return;
    }
    for (const k of Object.keys(v)) {
      if (k === "__proto__") {
        out.problem = new ApiError("invalid_request", "the field name __proto__ is not allowed", [{ path: "__proto__", message: "is not allowed" }]);
        return;
      }
      if (!k.isWellFormed()) {
        out.problem = notWellFormed();
        return;
      }
      const here = join(at, k);
      if (seeking() && k.includes("\u0000")) out.nulAt = here;
      visit((v as Record<string, unknown>)[k], here);
    }
  };
  visit(value, "");
  return out;
}

/**
 * A JSON number keeps its value through parsing: finite (not beyond ±1.8e308) and, when whole,
 * within ±(2^53 − 1), where every integer is exact. Numbers of the API's own fields are checked
 * by their schemas; this is for free-form ones (metadata), which are stored as parsed.
 */
const exact = (v: number) => Number.isFinite(v) && (!Number.isInteger(v) || Number.isSafeInteger(v));

const numberProblem = (path: string, what: string) =>
  new ApiError("invalid_request", `${path}: ${what}; send a number that large or that precise as a string`, [
    { path, message: `${what}; send it as a string` },
  ]);

/** The problem naming the first number of the body that does not keep its value (a second walk, with paths: rare). */
function inexactNumber(body: unknown): ApiError {
  const find = (v: unknown, at: string): string | undefined => {
    if (typeof v === "number") return exact(v) ? undefined : at;
    if (v === null || typeof v !== "object") return undefined;
    for (const [k, x] of Array.isArray(v) ? v.entries() : Object.entries(v)) {
      const hit = find(x, at === "" ? String(k) : `${at}.${k}`);
      if (hit !== undefined) return hit;
    }
    return undefined;
  };
  const path = find(body, "") || "body";
  return numberProblem(path, "is a number that does not keep its value (beyond ±1.8e308, or a whole number beyond ±9007199254740991)");
}

/** The first number literal of JSON text (outside strings) with a non-zero digit that reads as 0, with where it is. */
function underflowingLiteral(text: string): { literal: string; line: number; column: number } | undefined {
  // Strings and numbers in order: a string is skipped whole, escapes included.
  for (const m of text.matchAll(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g)) {
    const literal = m[0];
    if (literal.startsWith('"') || Number(literal) !== 0 || !/[1-9]/.test(literal.replace(/[eE].*$/, ""))) continue;
    return { literal: literal.length > 40 ? `${literal.slice(0, 37)}...` : literal, ...lineColumn(text, m.index) };
  }
  return undefined;
}

/** Line and column (from 1) of a position in text. */
function lineColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position);
  return { line: before.split("\n").length, column: position - before.lastIndexOf("\n") };
}

const notWellFormed = () =>
  new ApiError("invalid_request", "the body holds a string that is not well-formed Unicode (a lone surrogate escape such as \\ud800)");

/** Deepest nesting of arrays and objects in JSON text, ignoring brackets inside strings. */
function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92 /* \ */) i++;
      else if (ch === 34 /* " */) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 123 /* { */ || ch === 91 /* [ */) max = Math.max(max, ++depth);
    else if (ch === 125 || ch === 93) depth--;
  }
  return max;
}

/**
 * Where a body stops being JSON, from the parser's message, as line and column (the parser's own
 * words without the snippet of the body it may quote): "expected ':' after property name at line 1,
 * column 6".
 */
export function whereJsonBreaks(text: string, message: string): string {
  const at = /at position (\d+)/.exec(message);
  if (at === null) {
    if (/end of JSON input/i.test(message)) return "it ends before the JSON value is complete";
    const token = /^Unexpected token '(.)'/.exec(message);
    return token ? `unexpected '${token[1]}' at line 1, column 1` : "it is not a JSON value";
  }
  const { line, column } = lineColumn(text, Number(at[1]));
  const what = message.replace(/ in JSON at position \d+.*$/s, "").replace(/^./, (ch) => ch.toLowerCase());
  return `${what} at line ${line}, column ${column}`;
}
