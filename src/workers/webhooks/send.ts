import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { performance } from "node:perf_hooks";
import { forbiddenAddress, urlShapeProblem } from "../../domain/webhooks.js";

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
}

/** How a delivery is sent; tests may pass a real implementation of their own (e.g. one counting calls). */
export type Sender = (url: string, headers: Record<string, string>, body: string, options: SendOptions) => Promise<SendResult>;

/**
 * A name lookup that refuses forbidden addresses: the connection goes to the very address checked,
 * so a host that resolved to a public address at registration and to a private one now (DNS
 * rebinding) is not reached.
 */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, verbatim: true }, (err, address: string | LookupAddress[], family?: number) => {
      if (err || allowPrivate) return (callback as (...a: unknown[]) => void)(err, address, family);
      const all = Array.isArray(address) ? address.map((a) => a.address) : [address];
      const bad = all.map((a) => [a, forbiddenAddress(a)] as const).find(([, why]) => why);
      if (bad) return (callback as (...a: unknown[]) => void)(new Error(`${hostname} resolves to ${bad[0]}, ${bad[1]}: not sent`), address, family);
      (callback as (...a: unknown[]) => void)(null, address, family);
    });
  };
}

/**
 * POSTs one delivery. Success is a 2xx answer; anything else (another status, a redirect, which is
 * not followed, a timeout, a refused address or connection) is a failure with its reason. The
 * answer's body is read (up to 64 KiB) and dropped.
 */
export const sendWebhook: Sender = (url, headers, body, options) => {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise<SendResult>((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return resolve({ ok: false, statusCode: null, latencyMs: 0, error: "invalid url" });
    }
    const shape = urlShapeProblem(target, options.allowPrivate);
    if (shape) return resolve({ ok: false, statusCode: null, latencyMs: 0, error: `url ${shape}: not sent` });
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(
      target,
      {
        method: "POST",
        headers: { ...headers, "content-length": Buffer.byteLength(body).toString() },
        lookup: guardedLookup(options.allowPrivate),
        signal: AbortSignal.timeout(options.timeoutMs),
        agent: false,
      },
      (res: IncomingMessage) => {
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > 65_536) res.destroy();
        });
        const done = () => {
          const code = res.statusCode ?? 0;
          const ok = code >= 200 && code < 300;
          resolve({ ok, statusCode: code, latencyMs: elapsed(), error: ok ? null : `answered ${code}` });
        };
        res.on("end", done);
        res.on("close", done);
        res.on("error", done);
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => {
      const why = err.name === "AbortError" || err.name === "TimeoutError" ? `no answer within ${options.timeoutMs} ms` : (err.code ?? err.message);
      resolve({ ok: false, statusCode: null, latencyMs: elapsed(), error: err.message.includes("resolves to") ? err.message : why });
    });
    req.end(body);
  });
};
