import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { LedgerError } from "../domain/errors.js";
import { forbiddenAddress, urlShapeProblem } from "../domain/webhooks.js";

/**
 * Checks a webhook URL against server-side request forgery at registration: http or https, no
 * credentials, and every address its host resolves to public (not private, loopback, link-local,
 * unspecified…), unless the deployment allows private addresses (WEBHOOKS_ALLOW_PRIVATE). The
 * worker checks the address it connects to again at each delivery (DNS can change: rebinding).
 * Refusals are 422 webhook_url_refused naming `url`. Returns the URL normalized.
 */
export async function checkWebhookUrl(text: string, allowPrivate: boolean): Promise<string> {
  const refuse = (why: string) => {
    throw new LedgerError("webhook_url_refused", `the webhook endpoint url ${text} ${why}`, [{ path: "url", message: why }]);
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse("is not a URL");
  }
  const shape = urlShapeProblem(url, allowPrivate);
  if (shape) return refuse(shape);
  if (allowPrivate) return url.toString();
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0) return url.toString();
  let addresses: Array<{ address: string }>;
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    return refuse(`has a host, ${host}, that does not resolve`);
  }
  for (const { address } of addresses) {
    const why = forbiddenAddress(address);
    if (why) return refuse(`resolves to ${address}, ${why}: webhooks are sent to public addresses only`);
  }
  return url.toString();
}
