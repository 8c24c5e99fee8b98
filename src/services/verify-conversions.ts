import type { Queryable } from "../db/client.js";
import { rateLockMismatches } from "../db/queries/rate-locks.js";
import { conversionsWithBookings, type ConversionCheckRow } from "../db/queries/verify.js";
import { convertAmount, invertRate } from "../domain/conversion.js";

/**
 * `verify`'s conversions check (docs/settlement.md): every conversion's amounts follow from its rate
 * by the documented rounding, its rate is the stored rate it names (oriented from → to), and its
 * transfer booked exactly those amounts through the platform's conversion accounts; a slice at a
 * locked rate used its lock's rate, and each lock's `consumed` is what its slices used.
 */
export async function findConversionMismatches(db: Queryable): Promise<{ id: string; what: string }[]> {
  const out: { id: string; what: string }[] = [];
  for (const r of await conversionsWithBookings(db)) {
    const what = mismatchOf(r);
    if (what) out.push({ id: r.id, what: `conversion ${r.id} (${r.kind} ${r.payout_id}, ${r.from_code}→${r.to_code}): ${what}` });
  }
  out.push(...(await rateLockMismatches(db)));
  return out;
}

function mismatchOf(r: ConversionCheckRow): string | null {
  const rate = { num: BigInt(r.rate_num), den: BigInt(r.rate_den) };
  if (r.rate_id === null || r.stored_num === null) return "names no stored rate";
  const stored = { num: BigInt(r.stored_num), den: BigInt(r.stored_den!) };
  const expected = r.stored_base_is_from ? stored : invertRate(stored);
  if (expected.num * rate.den !== rate.num * expected.den)
    return `applied the rate ${r.rate_num}/${r.rate_den}, not its stored rate ${expected.num}/${expected.den}`;
  const want = convertAmount(BigInt(r.part), r.from_scale, r.to_scale, rate);
  if (want.to !== BigInt(r.to_amount) || want.used !== BigInt(r.used) || want.remainder !== BigInt(r.remainder)) {
    return `part ${r.part} at the rate gives ${want.to} for ${want.used} (remainder ${want.remainder}), not ${r.to_amount} for ${r.used} (remainder ${r.remainder})`;
  }
  // The revaluation is booked on the side of the pricing currency: the source of a payout, the target of a deposit.
  const [onUsed, onTo] = r.kind === "payout" ? [BigInt(r.revaluation), 0n] : [0n, -BigInt(r.revaluation)];
  if (BigInt(r.booked_used) !== BigInt(r.used) + onUsed) {
    return `its transfer booked ${r.booked_used} into the conversion account, not the ${r.used} used${onUsed === 0n ? "" : ` plus the ${onUsed} revaluation`}`;
  }
  if (BigInt(r.booked_to) !== BigInt(r.to_amount) + onTo) {
    return `its transfer booked ${r.booked_to} out of the conversion account, not the ${r.to_amount} converted${onTo === 0n ? "" : ` less the ${r.revaluation} revaluation`}`;
  }
  return null;
}
