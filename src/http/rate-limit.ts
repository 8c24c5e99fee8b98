/**
 * A token bucket per API key, per process: `perSecond` requests a second on average, bursts of up
 * to `burst`. Beyond it a request is refused with 429 and `Retry-After` (whole seconds until a
 * token is back). Several API processes each keep their own buckets, so the limit a key sees is
 * per process.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes a token for `key`: undefined when allowed, else the seconds to wait. */
  take(key: string): number | undefined {
    if (this.perSecond <= 0) return undefined;
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: t };
    b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.perSecond);
    b.at = t;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return undefined;
    }
    if (this.buckets.size > 100_000) this.prune(t);
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
  }

  /** Forgets full buckets (keys idle long enough to have refilled). */
  private prune(t: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + ((t - b.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(k);
  }
}
