import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.js";
import { ApiError } from "./problem.js";

const MAX_DEPTH = 32;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Route middleware for every operation that takes a JSON body, run after the role check. It
 * refuses, before anything else looks at the body: a media type other than JSON (415), a
 * content encoding (415), bytes that are not UTF-8, nesting deeper than 32 levels (which would
 * exhaust the stack of recursive code further on), strings that are not well-formed Unicode (lone
 * surrogates, which PostgreSQL cannot store), and `__proto__` keys (which JavaScript objects drop
 * silently). A request without a body passes: operations whose body is optional treat it as {}.
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
  try {
    JSON.parse(text, (key, value) => {
      if (key === "__proto__") throw new ApiError("invalid_request", "the field name __proto__ is not allowed", [{ path: "__proto__", message: "is not allowed" }]);
      if ((typeof value === "string" && !value.isWellFormed()) || !key.isWellFormed()) {
        throw new ApiError("invalid_request", "the body holds a string that is not well-formed Unicode (a lone surrogate escape such as \\ud800)");
      }
      return value;
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError("malformed_json", "the body is not valid JSON");
  }
  return next();
};

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
