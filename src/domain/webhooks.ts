import { BlockList, isIP } from "node:net";

/**
 * Rules of webhook delivery (docs/api.md, "Webhooks"), after the Standard Webhooks conventions:
 * retries with exponential backoff and jitter, an endpoint disabled after a day of failures, and
 * the addresses the service never sends to (server-side request forgery).
 */

/** An endpoint that failed every attempt for this long is disabled. */
export const DISABLE_AFTER_MS = 24 * 3600_000;
/** How long a rotated-out secret keeps signing beside the new one. */
export const SECRET_OVERLAP_MS = 24 * 3600_000;
/** The first retry waits about this long; each next one twice as long, up to BACKOFF_CAP_MS. */
export const BACKOFF_BASE_MS = 5_000;
export const BACKOFF_CAP_MS = 3600_000;

/**
 * The wait before the next attempt after `failed` failed attempts in a row (1, 2, …): exponential
 * (base × 2^(failed−1), capped) with "equal jitter" (half fixed, half random), so that endpoints
 * that failed together do not retry together. `random` returns [0, 1).
 */
export function backoffMs(failed: number, random: () => number): number {
  const full = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(30, Math.max(0, failed - 1)));
  return Math.floor(full / 2 + random() * (full / 2));
}

/** Whether an endpoint failing since `failingSince` is disabled by a failure at `now`. */
export function failedTooLong(failingSince: Date, now: Date): boolean {
  return now.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS;
}

/** The body of a delivery (Standard Webhooks payload: type, timestamp, data), plus the event's id and position. */
export function webhookPayload(e: { id: string; position: bigint; type: string; occurredAt: Date; data: unknown }): string {
  return JSON.stringify({ id: e.id, type: e.type, timestamp: e.occurredAt.toISOString(), position: e.position.toString(), data: e.data });
}

/** Whether an endpoint subscribed to `types` (empty: all) receives an event of `type`. */
export function subscribes(types: readonly string[], type: string): boolean {
  return types.length === 0 || types.includes(type);
}

const forbidden: Array<[string, number, "ipv4" | "ipv6", string]> = [
  ["0.0.0.0", 8, "ipv4", "an unspecified address"],
  ["10.0.0.0", 8, "ipv4", "a private address"],
  ["100.64.0.0", 10, "ipv4", "a private (shared) address"],
  ["127.0.0.0", 8, "ipv4", "a loopback address"],
  ["169.254.0.0", 16, "ipv4", "a link-local address"],
  ["172.16.0.0", 12, "ipv4", "a private address"],
  ["192.0.0.0", 24, "ipv4", "a reserved address"],
  ["192.0.2.0", 24, "ipv4", "a documentation address"],
  ["192.88.99.0", 24, "ipv4", "a reserved (6to4 relay) address"],
  ["192.168.0.0", 16, "ipv4", "a private address"],
  ["198.18.0.0", 15, "ipv4", "a reserved address"],
  ["198.51.100.0", 24, "ipv4", "a documentation address"],
  ["203.0.113.0", 24, "ipv4", "a documentation address"],
  ["224.0.0.0", 4, "ipv4", "a multicast address"],
  ["240.0.0.0", 4, "ipv4", "a reserved address"],
  ["::", 128, "ipv6", "an unspecified address"],
  ["::1", 128, "ipv6", "a loopback address"],
  // Addresses that carry an IPv4 address in a form not judged as it (the mapped and NAT64 forms
  // are, above): IPv4-compatible (deprecated), IPv4-translated, 6to4 and Teredo, whatever IPv4 they carry.
  ["::", 96, "ipv6", "a reserved (IPv4-compatible) address"],
  ["::ffff:0:0:0", 96, "ipv6", "a reserved (IPv4-translated) address"],
  ["2002::", 16, "ipv6", "a reserved (6to4) address"],
  ["2001::", 32, "ipv6", "a reserved (Teredo) address"],
  ["64:ff9b:1::", 48, "ipv6", "a private (local NAT64) address"],
  ["100::", 64, "ipv6", "a reserved (discard) address"],
  ["2001::", 23, "ipv6", "a reserved (IETF protocol assignment) address"],
  ["2001:db8::", 32, "ipv6", "a documentation address"],
  ["3fff::", 20, "ipv6", "a documentation address"],
  ["5f00::", 16, "ipv6", "a reserved (segment routing) address"],
  ["fc00::", 7, "ipv6", "a private address"],
  ["fe80::", 10, "ipv6", "a link-local address"],
  ["fec0::", 10, "ipv6", "a reserved (site-local) address"],
  ["ff00::", 8, "ipv6", "a multicast address"],
];
const lists = forbidden.map(([net, prefix, family, what]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return { list, family, what };
});

/**
 * Why the service must not send to this IP address (private, loopback, link-local, unspecified,
 * multicast or reserved), or undefined for a public one. An IPv4 address inside IPv6 (::ffff:a.b.c.d,
 * ::a.b.c.d, 64:ff9b::a.b.c.d) is judged as the IPv4 address.
 */
export function forbiddenAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return "not an IP address";
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4) return forbiddenAddress(v4);
  }
  const fam = family === 4 ? "ipv4" : "ipv6";
  return lists.find((l) => l.family === fam && l.list.check(address, fam))?.what;
}

/** The IPv4 address carried by an IPv4-mapped, -compatible or NAT64 IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase().replace(/^\[|\]$/g, "");
  const dotted = lower.match(/^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) return dotted[1];
  const hex = lower.match(/^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/);
  if (!hex) return undefined;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * What is wrong with a URL before any name is resolved: the scheme (http or https only), credentials
 * in it, or a host that is an IP literal the service must not reach (unless private ones are allowed).
 * Returns the reason, or undefined.
 */
export function urlShapeProblem(url: URL, allowPrivate: boolean): string | undefined {
  if (url.protocol !== "https:" && url.protocol !== "http:") return `has scheme ${url.protocol.replace(/:$/, "")}: only http and https are allowed`;
  if (url.username !== "" || url.password !== "") return "must not contain credentials";
  if (url.hostname === "") return "has no host";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!allowPrivate && isIP(host) !== 0) {
    const why = forbiddenAddress(host);
    if (why) return `is ${host}, ${why}`;
  }
  return undefined;
}
