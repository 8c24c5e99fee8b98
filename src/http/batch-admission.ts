import type { MiddlewareHandler } from "hono";
import type { Role } from "../domain/access.js";
import { recheckApiKey, refuseRole } from "./auth.js";
import type { AppDeps, AppEnv } from "./request-context.js";

/**
 * Bounds the usage-batch bodies a process reads, parses and writes at once, by their size: a batch
 * waits (in arrival order) until the bytes of the batches in flight plus its own fit in
 * `BATCH_BODIES_IN_FLIGHT_BYTES`. The heap a batch needs grows with its body, so this keeps the
 * process within the heap the start script gives it (`--max-old-space-size`, docs/operations.md)
 * however many clients post large batches at once. A batch alone is always admitted, so one body
 * up to `MAX_BATCH_BODY_BYTES` passes even with a smaller budget.
 */
export class ByteAdmission {
  private inFlight = 0;
  private readonly waiting: { bytes: number; go: () => void }[] = [];

  constructor(private readonly capacity: number) {}

  /** Resolves with the function that gives the bytes back (call it once, when the request is done). */
  async acquire(bytes: number): Promise<() => void> {
    if (this.waiting.length === 0 && this.fits(bytes)) this.inFlight += bytes;
    else await new Promise<void>((go) => this.waiting.push({ bytes, go }));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight -= bytes;
      this.admitWaiting();
    };
  }

  get bytesInFlight(): number {
    return this.inFlight;
  }

  private fits(bytes: number): boolean {
    return this.inFlight === 0 || this.inFlight + bytes <= this.capacity;
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.inFlight += next.bytes;
      next.go();
    }
  }
}

/**
 * `POST /v1/usage/batch` holds its body's bytes (Content-Length; a body without one counts as
 * `MAX_BATCH_BODY_BYTES`) in the process's budget from after the key and role checks to its
 * answer; once admitted, the key is checked again. A key of a role that may not post a batch
 * (`roles`, the route's) is refused before it queues: it neither waits behind other batches nor
 * takes a place in the queue that theirs would wait behind. The body is read after this
 * (middleware/body-limit.ts: when the route's JSON guard asks for it), so what waits here holds no body.
 */
export function batchAdmission(config: AppDeps["config"], roles: readonly Role[]): MiddlewareHandler<AppEnv> {
  const admission = new ByteAdmission(Math.max(config.BATCH_BODIES_IN_FLIGHT_BYTES ?? config.MAX_BATCH_BODY_BYTES, 1));
  return async (c, next) => {
    if (c.req.method !== "POST") return next();
    refuseRole(c, roles);
    const declared = Number(c.req.header("content-length"));
    const bytes = Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, config.MAX_BATCH_BODY_BYTES) : config.MAX_BATCH_BODY_BYTES;
    const release = await admission.acquire(bytes);
    try {
      // The wait can be long (other batches' bytes): a key revoked meanwhile writes nothing.
      await recheckApiKey(c);
      await next();
    } finally {
      release();
    }
  };
}
