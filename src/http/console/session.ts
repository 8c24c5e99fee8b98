import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../request-context.js";

/**
 * The console's session: the API key the person signed in with, sealed (AES-256-GCM) in an
 * HttpOnly, SameSite=Strict cookie (Secure over TLS) with a CSRF token and an expiry. The sealing
 * key is made when the app is made and lives only in memory: a restart signs everyone out, and
 * nothing on disk or in the browser can open a cookie. Signing out ends the session in the process
 * too (a copy of the cookie opens nothing after it). The key itself is never logged nor shown.
 */

export interface Session {
  /** The API key every page calls the API with. */
  apiKey: string;
  /** The synchronizer token every POST form of this session carries. */
  csrf: string;
  /** Milliseconds since the epoch (the service's clock) after which the session is over. */
  expiresAt: number;
}

/** How long a session lasts after signing in. */
export const SESSION_HOURS = 8;
/** Sessions of one API key signed out and not yet expired that a process remembers. */
const MAX_ENDED_SESSIONS_PER_KEY = 1_000;

export interface SessionStore {
  read(c: Context<AppEnv>): Session | null;
  write(c: Context<AppEnv>, s: Session): void;
  /** Signs the session out: its cookie is cleared, and a copy of it kept elsewhere opens nothing any more. */
  end(c: Context<AppEnv>): void;
  /** A fresh random token (CSRF, sign-in nonce). */
  token(): string;
  /** The sign-in form's nonce cookie (double submit: the form's field must equal the cookie). */
  signInNonce(c: Context<AppEnv>): string;
  checkSignInNonce(c: Context<AppEnv>, field: string | undefined): boolean;
}

const isHttps = (c: Context<AppEnv>) => new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";

/** Constant-time comparison of two tokens. */
export function sameToken(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function seal(key: Buffer, s: Session): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify({ k: s.apiKey, c: s.csrf, e: s.expiresAt }), "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

function open(key: Buffer, sealed: string): Session | null {
  try {
    const raw = Buffer.from(sealed, "base64url");
    if (raw.length < 29) return null;
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const json = JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")) as { k: string; c: string; e: number };
    return typeof json.k === "string" && typeof json.c === "string" && typeof json.e === "number" ? { apiKey: json.k, csrf: json.c, expiresAt: json.e } : null;
  } catch {
    return null; // tampered with, or sealed by another process
  }
}

/**
 * Sessions for one listener. The cookie's name carries the listener's surface: cookies do not keep
 * ports apart, and the public and the management listener of one host each keep their own.
 */
export function sessionStore(surface: string, now: () => Date): SessionStore {
  const key = randomBytes(32);
  const name = `ledger_console_${surface}`;
  const nonceName = `ledger_console_${surface}_signin`;
  const attributes = (c: Context<AppEnv>) => ({ path: "/console", httpOnly: true, secure: isHttps(c), sameSite: "Strict" as const });
  const token = () => randomBytes(24).toString("base64url");
  // Sessions signed out before their expiry, until they expire: per API key (a digest of it), by
  // the session's CSRF token (its own, random). Kept per key, so that signing in and out again and
  // again with one key forgets only that key's oldest ended sessions, never another person's.
  const ended = new Map<string, Map<string, number>>();
  const keyOf = (apiKey: string) => createHash("sha256").update(apiKey).digest("base64url");
  const read = (c: Context<AppEnv>): Session | null => {
    const cookie = getCookie(c, name);
    const s = cookie ? open(key, cookie) : null;
    return s && s.expiresAt > now().getTime() && !ended.get(keyOf(s.apiKey))?.has(s.csrf) ? s : null;
  };
  return {
    token,
    read,
    end(c) {
      const s = read(c);
      if (s) {
        const k = keyOf(s.apiKey);
        const mine = ended.get(k) ?? new Map<string, number>();
        const at = now().getTime();
        for (const [csrf, expiresAt] of mine) if (expiresAt <= at) mine.delete(csrf);
        // Bounded per key: past MAX_ENDED_SESSIONS_PER_KEY its oldest is forgotten (it still expires with its cookie).
        if (mine.size >= MAX_ENDED_SESSIONS_PER_KEY) mine.delete(mine.keys().next().value!);
        mine.set(s.csrf, s.expiresAt);
        ended.set(k, mine);
      }
      deleteCookie(c, name, attributes(c));
    },
    write(c, s) {
      setCookie(c, name, seal(key, s), { ...attributes(c), maxAge: SESSION_HOURS * 3600 });
      deleteCookie(c, nonceName, attributes(c));
    },
    signInNonce(c) {
      const existing = getCookie(c, nonceName);
      if (existing && /^[A-Za-z0-9_-]{32}$/.test(existing)) return existing;
      const nonce = token();
      setCookie(c, nonceName, nonce, { ...attributes(c), maxAge: 3600 });
      return nonce;
    },
    checkSignInNonce(c, field) {
      const cookie = getCookie(c, nonceName);
      return cookie !== undefined && sameToken(field, cookie);
    },
  };
}
