import { isRpcUnavailable, type EvmChain } from "../chain/evm.js";
import type { Settlements } from "../chain/settlement.js";
import type { Database } from "../db/client.js";
import { listAssets } from "../db/queries/assets.js";
import type { Asset } from "../domain/assets.js";
import type { FaultPoint } from "../domain/payouts.js";
import type { Logger } from "../log.js";
import { recheckRejectedReceipts, scanDeposits } from "../services/chain-deposits.js";
import { batchPending } from "./payout/batch.js";
import { broadcastSigned } from "./payout/broadcast.js";
import { errorSummary, type PayoutContext } from "./payout/context.js";
import { schedule } from "./payout/schedule.js";
import { convertPending } from "./payout/convert.js";
import { convertDeposits, type JudgedDeposits } from "../services/convert-deposits.js";
import { lockEarnedRates } from "../services/lock-rates.js";
import { recoverReceivables } from "../services/receivables.js";
import { signBatched } from "./payout/sign.js";
import { watchSubmitted } from "./payout/watch.js";

export interface PayoutWorkerOptions {
  log: Logger;
  /** Called at each fault point; the default does nothing. */
  fault?: (point: FaultPoint) => void;
}

/**
 * Pays pending payouts on chain, one step at a time, every step resumable from what is stored:
 *
 *   pending → batched (grouped per chain, asset and signer; simulated first, bad items left out)
 *   → signed (nonce taken from the database and the signed bytes stored, in one transaction)
 *   → submitted (broadcast; re-sent as the same bytes whenever the node lost them; replaced with
 *     higher fees under the same nonce when stuck) → confirmed (receipt succeeded, enough blocks on
 *     top, block still canonical, the vault's Paid events match: the ledger hold is posted and gas
 *     booked) | failed (the hold is voided).
 *
 * Any number of workers may run against one database: rows are claimed with row locks and every
 * state change checks the state it expects, so each step takes effect once.
 *
 * The steps live in ./payout/: schedule.ts, batch.ts (step 1), sign.ts (2), broadcast.ts (3, and
 * replacements under the same nonce), watch.ts (4), settle.ts (5: confirm, or end unpaid) and
 * recover.ts (a submitted transaction without a receipt: re-sent, replaced, or found paid or dropped).
 */
export class PayoutWorker {
  private readonly ctx: PayoutContext;
  /** Customer accounts found with nothing to convert, judged again only when they change. */
  private readonly judgedDeposits: JudgedDeposits = new Map();

  constructor(
    private readonly db: Database,
    private readonly settlements: Settlements,
    private readonly options: PayoutWorkerOptions,
  ) {
    const fault = options.fault ?? (() => {});
    this.ctx = {
      db,
      settlements,
      fault,
      now: () => db.clock.now(),
      get log() {
        return options.log;
      },
      nativeAssets: new Map<bigint, Asset>(),
      checked: new Set<string>(),
    };
  }

  private get log() {
    return this.options.log;
  }

  /** One pass over everything: scheduled payouts, then each chain's steps. Errors of one chain are logged, not thrown. */
  async tick(): Promise<{ errors: unknown[] }> {
    const errors: unknown[] = [];
    try {
      // Operators' receivables, from earnings not yet swept (docs/ledger.md, "Clawbacks"): before any payout is scheduled.
      await recoverReceivables(this.db);
    } catch (err) {
      errors.push(err);
      this.log.warn({ worker: "payouts", err: errorSummary(err) }, "recovering operator receivables failed; retrying next tick");
    }
    try {
      await this.schedule();
    } catch (err) {
      errors.push(err);
      this.log.warn({ worker: "payouts", err }, "scheduling payouts failed");
    }
    try {
      // Earnings of marketplaces that lock the rate at earning, before any payout converts them.
      await lockEarnedRates(this.db, this.settlements, this.log);
    } catch (err) {
      errors.push(err);
      this.log.warn({ worker: "payouts", err: errorSummary(err) }, "locking earned rates failed; retrying next tick");
    }
    try {
      await this.convert();
    } catch (err) {
      errors.push(err);
      this.log.warn({ worker: "payouts", err: errorSummary(err) }, "converting payouts failed; retrying next tick");
    }
    for (const chain of this.settlements.chains) {
      try {
        await this.tickChain(chain);
      } catch (err) {
        errors.push(err);
        this.log.warn({ worker: "payouts", chain: chain.settings.name, err: errorSummary(err) }, "payout step failed; retrying next tick");
      }
    }
    try {
      // Customers' money received in another asset than their marketplace's pricing currency.
      await convertDeposits(this.db, this.settlements, this.log, undefined, this.judgedDeposits);
    } catch (err) {
      errors.push(err);
      this.log.warn({ worker: "payouts", err: errorSummary(err) }, "converting customer funds failed; retrying next tick");
    }
    return { errors };
  }

  /**
   * Every step runs even when an earlier one failed (a stuck broadcast must not keep confirmations
   * or deposits from being seen); the first error is thrown at the end, for the log.
   */
  async tickChain(chain: EvmChain): Promise<void> {
    const errors: unknown[] = [];
    const step = async (f: () => Promise<unknown>) => {
      // The node unreachable: the next steps would only wait for it too.
      if (errors.some(isRpcUnavailable)) return;
      try {
        await f();
      } catch (err) {
        errors.push(err);
      }
    };
    await step(() => this.batchPending(chain));
    await step(() => this.signBatched(chain));
    await step(() => this.broadcastSigned(chain));
    await step(() => this.watchSubmitted(chain));
    // Customers' deposits into the treasury, credited once (docs/reconciliation.md).
    await step(async () => {
      const assets = await listAssets(this.db, { limit: 1000 });
      await scanDeposits(this.db, chain, assets);
      // Deposits a receipt proposal named, skipped while it stood, once it is rejected.
      await recheckRejectedReceipts(this.db, chain, assets);
    });
    if (errors.length > 0) throw errors[0];
  }

  /** Creates the payouts that policies with an interval schedule call for, once per operator and window. */
  async schedule(): Promise<number> {
    return schedule(this.ctx);
  }

  /** Converts pending convert payouts into the assets they are paid in, each part a payout of its own. */
  async convert(): Promise<number> {
    return convertPending(this.ctx);
  }

  /** Step 1: group pending payouts into batches, leaving out what cannot be paid now. */
  async batchPending(chain: EvmChain): Promise<void> {
    return batchPending(this.ctx, chain);
  }

  /** Step 2: simulate each batch again, then take a nonce and store the signed transaction. */
  async signBatched(chain: EvmChain): Promise<void> {
    return signBatched(this.ctx, chain);
  }

  /** Step 3: broadcast signed transactions in nonce order, replacing refused ones once due. */
  async broadcastSigned(chain: EvmChain): Promise<void> {
    return broadcastSigned(this.ctx, chain);
  }

  /** Step 4: follow submitted transactions to a final answer (settled, recovered, or ended unpaid). */
  async watchSubmitted(chain: EvmChain): Promise<void> {
    return watchSubmitted(this.ctx, chain);
  }
}
