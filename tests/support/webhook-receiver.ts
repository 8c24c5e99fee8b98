import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A webhook receiver written from the Standard Webhooks specification, not from the sender's code:
 * the signed content is `${webhook-id}.${webhook-timestamp}.${body}`, signed with HMAC-SHA256 under
 * the secret's bytes (the base64 after `whsec_`), sent as `v1,<base64>`; webhook-signature is a
 * space-separated list of such signatures, any one of which may match; the timestamp must be within
 * the tolerance (5 minutes) of the receiver's clock.
 */
export function verifyStandardWebhook(
  secrets: string[],
  headers: { id?: string; timestamp?: string; signature?: string },
  body: string,
  nowMs: number,
  toleranceS = 300,
): { valid: boolean; matched: number[]; reason?: string } {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) return { valid: false, matched: [], reason: "missing header" };
  if (!/^\d+$/.test(timestamp)) return { valid: false, matched: [], reason: "bad timestamp" };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceS) return { valid: false, matched: [], reason: "timestamp outside tolerance" };
  const given = signature
    .split(" ")
    .map((s) => s.split(","))
    .filter(([v, sig]) => v === "v1" && sig)
    .map(([, sig]) => Buffer.from(sig!, "base64"));
  const matched: number[] = [];
  secrets.forEach((secret, i) => {
    const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
    const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
    if (given.some((g) => g.length === expected.length && timingSafeEqual(g, expected))) matched.push(i);
  });
  return matched.length > 0 ? { valid: true, matched } : { valid: false, matched, reason: "no signature matches" };
}

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  path: string;
  /** Deliveries of other requests in flight at the same path when this one arrived. */
  concurrentOnPath: number;
}

/** What the receiver answers a request: a status, after a delay. */
export type Behaviour = (r: Received, n: number) => { status: number; delayMs?: number };

/** A loopback receiver recording every request (path per endpoint: /a, /b, …). */
export class WebhookReceiver {
  readonly received: Received[] = [];
  behaviour: Behaviour = () => ({ status: 204 });
  private server?: Server;
  private inFlight = new Map<string, number>();

  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "/";
        const now = this.inFlight.get(path) ?? 0;
        this.inFlight.set(path, now + 1);
        const r: Received = {
          id: String(req.headers["webhook-id"] ?? ""),
          timestamp: String(req.headers["webhook-timestamp"] ?? ""),
          signature: String(req.headers["webhook-signature"] ?? ""),
          body: Buffer.concat(chunks).toString("utf8"),
          path,
          concurrentOnPath: now,
        };
        this.received.push(r);
        const { status, delayMs = 0 } = this.behaviour(r, this.received.length);
        setTimeout(() => {
          this.inFlight.set(path, (this.inFlight.get(path) ?? 1) - 1);
          res.writeHead(status).end();
        }, delayMs);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  /** The requests received at a path, as parsed bodies. */
  at(path: string): Array<Received & { json: { id: string; type: string; position: string; data: Record<string, unknown> } }> {
    return this.received.filter((r) => r.path === path).map((r) => ({ ...r, json: JSON.parse(r.body) }));
  }
}
