import type { Queryable } from "../../db/client.js";
import { insertRate } from "../../db/queries/conversions.js";
import { FUTURE_TOLERANCE_MS } from "../../domain/clock.js";
import { formatRate, parseRate } from "../../domain/conversion.js";
import { LedgerError } from "../../domain/errors.js";
import { mayPropose, openOrInsert, requireAsset, type Proposal, type Proposing } from "./proposal.js";

export interface RateInput {
  base: string;
  quote: string;
  /** Whole `quote` units one whole `base` unit is worth, as a decimal ("2.5"). */
  value: string;
  /** When the rate was observed (default: when it is proposed). */
  observedAt?: Date;
  /** Where finance took it from (a bank's fixing, an exchange), for the record. */
  reference?: string;
}

/**
 * Proposes a manual rate (docs/settlement.md, "Rates"): recorded with source `manual` when another
 * key approves it, observed at `observedAt`, so the time it waited for approval counts against the
 * asset's staleness bound.
 */
export async function proposeRate(db: Queryable, { now, by, ...input }: Proposing<RateInput>): Promise<Proposal> {
  mayPropose(by, "rate");
  const base = await requireAsset(db, input.base);
  const quote = await requireAsset(db, input.quote);
  if (base.id === quote.id)
    throw new LedgerError("invalid_request", "a rate is between two different assets", [{ path: "quote", message: "is the base asset" }]);
  const rate = parseRate(input.value, "value");
  const observedAt = input.observedAt ?? now;
  if (observedAt.getTime() > now.getTime() + FUTURE_TOLERANCE_MS) {
    const message = `observed_at ${observedAt.toISOString()} is in the future`;
    throw new LedgerError("invalid_request", message, [{ path: "observedAt", message: "is in the future" }]);
  }
  const payload = {
    base: base.code,
    base_asset_id: base.id,
    quote: quote.code,
    quote_asset_id: quote.id,
    value: formatRate(rate, 30),
    num: rate.num.toString(),
    den: rate.den.toString(),
    observed_at: observedAt.toISOString(),
    reference: input.reference ?? null,
  };
  return openOrInsert(db, now, by, "rate", null, payload);
}

/** Approving a rate proposal: the rate is recorded, its source reference the proposal. */
export async function applyRate(tx: Queryable, p: Proposal, at: Date): Promise<Record<string, unknown>> {
  const q = p.payload as Record<string, string>;
  const id = await insertRate(tx, {
    id: p.id,
    baseAssetId: q.base_asset_id!,
    quoteAssetId: q.quote_asset_id!,
    num: BigInt(q.num!),
    den: BigInt(q.den!),
    observedAt: new Date(q.observed_at!),
    source: "manual",
    sourceRef: p.id,
    recordedAt: at,
  });
  return { rate_id: id };
}
