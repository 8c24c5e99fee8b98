import { expect } from "vitest";

/**
 * The console's cookies and forms over a real loopback socket, without a browser: a cookie jar,
 * the CSRF token a page carries, and signing in with an API key.
 */

/** The cookies a response sets, merged over `jar`. */
export function cookies(res: Response, jar: Map<string, string>): Map<string, string> {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const at = pair!.indexOf("=");
    jar.set(pair!.slice(0, at), pair!.slice(at + 1));
  }
  return jar;
}

/** The jar as one Cookie header (name=value; …). */
export const cookieHeader = (jar: Map<string, string>) =>
  [...jar]
    .filter(([, v]) => v !== "")
    .map(([k, v]) => `${k}=${v}`)
    .join("; ");

/** The CSRF token of a page's form. */
export const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1];

/** Signs in to the console at `origin` with an API key: the session's cookies. */
export async function signIn(origin: string, key: string): Promise<Map<string, string>> {
  const jar = new Map<string, string>();
  const form = await fetch(`${origin}/console/sign-in`);
  cookies(form, jar);
  const nonce = csrfOf(await form.text())!;
  const res = await fetch(`${origin}/console/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: cookieHeader(jar), origin, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ csrf: nonce, api_key: key }).toString(),
  });
  expect(res.status).toBe(303);
  return cookies(res, jar);
}
