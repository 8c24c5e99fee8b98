import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { heldAmounts, lockPayoutsIn, markPayoutConfirmed, recordPayoutEvents, type Payout } from "../db/queries/payouts.js";
import type { WriteReceipt } from "../db/queries/write-receipts.js";
import { writeTransfers } from "../db/transfer-writer.js";
import { chart, specKey } from "../domain/chart.js";
import type { PayoutStatus } from "../domain/payouts.js";
import type { TransferInput } from "../domain/transfers.js";
import { throwIfRefused } from "./fail-payouts.js";
import { routeOf } from "./payouts.js";

/**
 * Confirms payouts that were paid: posts each hold (payable → in transit becomes final) and moves
 * the amount from in transit out of the treasury, all in one transaction with `alsoInTx`.
 * `details` gives each payout's chain facts (or external reference).
 */
export async function confirmPayouts(
  db: Database,
  {
    payouts,
    details,
    from,
    extra = [],
    alsoInTx,
    receipt,
  }: {
    payouts: Payout[];
    details: Map<string, { txHash?: string; blockNumber?: bigint; logIndex?: number; externalReference?: string }>;
    from: PayoutStatus[];
    extra?: TransferInput[];
    alsoInTx?: (tx: Queryable) => Promise<void>;
    receipt?: WriteReceipt<void>;
  },
): Promise<string[]> {
  let confirmed: Payout[] = [];
  const specs = new Map<string, string>();
  const [first] = await writeTransfers(
    db,
    async (tx) => {
      const open = new Set(
        await lockPayoutsIn(
          tx,
          payouts.map((p) => p.id),
          from,
        ),
      );
      confirmed = payouts.filter((p) => open.has(p.id));
      const wanted = confirmed.flatMap((p) => [chart.payoutsInTransit(p.assetId, routeOf(p)), chart.treasury(p.assetId, routeOf(p))]);
      const ids = await ensureAccounts(tx, wanted);
      for (const [k, v] of ids) specs.set(k, v);
      return [...(await settlementsOf(tx, confirmed, specs, details)), ...(confirmed.length > 0 ? extra : [])];
    },
    {
      afterWrite: async (tx, outcomes, bookedAt) => {
        throwIfRefused(outcomes);
        for (const [i, p] of confirmed.entries()) {
          const settle = outcomes[i * 2 + 1]!;
          const settleId = settle.kind === "created" ? settle.transfer.id : settle.kind === "replayed" ? settle.id : null;
          const d = details.get(p.id) ?? {};
          await markPayoutConfirmed(tx, p.id, settleId, d, bookedAt);
        }
        await recordPayoutEvents(
          tx,
          confirmed.map((p) => p.id),
          "confirmed",
          bookedAt,
        );
        if (confirmed.length > 0) await alsoInTx?.(tx);
      },
      receipt,
    },
  );
  if (first && !first.ok) throw first.error;
  return confirmed.map((p) => p.id);
}

/** The confirmed payouts' transfers; what leaves in transit is what the ledger held for each payout, whatever its row says. */
async function settlementsOf(
  tx: Queryable,
  confirmed: Payout[],
  accountIds: Map<string, string>,
  details: Map<string, { txHash?: string; externalReference?: string }>,
): Promise<TransferInput[]> {
  const held = await heldAmounts(
    tx,
    confirmed.map((p) => p.holdTransferId),
  );
  return confirmed.flatMap((p) => settlementOf(p, held.get(p.holdTransferId), accountIds, details.get(p.id)));
}

/** A confirmed payout's two transfers: its hold posted (payable → in transit), then what it held from in transit → treasury. */
function settlementOf(
  p: Payout,
  held: bigint | undefined,
  accountIds: Map<string, string>,
  d: { txHash?: string; externalReference?: string } | undefined,
): TransferInput[] {
  if (held === undefined) throw new Error(`payout ${p.id}: its hold ${p.holdTransferId} holds nothing`);
  return [
    { kind: "post_pending", pendingId: p.holdTransferId, idempotencyKey: `payout:${p.id}:post`, metadata: { payout: { id: p.id } } },
    {
      kind: "standard",
      idempotencyKey: `payout:${p.id}:settle`,
      metadata: { payout: { id: p.id, tx_hash: d?.txHash ?? null, external_reference: d?.externalReference ?? null } },
      legs: [
        {
          debitAccountId: accountIds.get(specKey(chart.payoutsInTransit(p.assetId, routeOf(p))))!,
          creditAccountId: accountIds.get(specKey(chart.treasury(p.assetId, routeOf(p))))!,
          amount: held,
        },
      ],
    },
  ];
}
