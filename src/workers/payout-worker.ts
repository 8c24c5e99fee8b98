import type { Hex } from "viem";
import { isRpcUnavailable, ZERO_ADDRESS, type EvmChain } from "../chain/evm.js";
import type { Settlements } from "../chain/settlement.js";
import type { Database, Queryable } from "../db/client.js";
import { ensureAccounts } from "../db/ensure-accounts.js";
import { chart, specKey } from "../domain/chart.js";
import { ASSET_COLUMNS, getAsset, listAssets, toAsset, type AssetRow } from "../db/queries/assets.js";
import { type Asset } from "../domain/assets.js";
import { pgArray } from "../db/sql-arrays.js";
import { writeTransfers } from "../db/transfer-writer.js";
import { LedgerError } from "../domain/errors.js";
import { uuidv7 } from "../domain/ids.js";
import { bumpFees, type FaultPoint, gasCostInAsset, MAX_UNPAID_ATTEMPTS, scheduleWindow, withinGasCap } from "../domain/payouts.js";
import type { TransferInput } from "../domain/transfers.js";
import type { Logger } from "../log.js";
import { createAsset } from "../services/create-asset.js";
import { scanDeposits } from "../services/chain-deposits.js";
import { awaitingFunds, payableNow } from "../services/funding.js";
import { getOperatorPayoutLimits, getPayoutPolicy, lowerCap, scheduledPolicies } from "../services/payout-policies.js";
import { confirmPayouts, createPayout, PAYOUT_SELECT, toPayout } from "../services/payouts.js";
import { failPayouts } from "../services/fail-payouts.js";
import { recordPayoutEvents } from "../db/queries/payouts.js";
import { inTransaction } from "../services/transaction.js";


export interface PayoutWorkerOptions {
  log: Logger;
  /** Called at each fault point; the default does nothing. */
  fault?: (point: FaultPoint) => void;
}

type BatchRow = {
  id: string; asset_id: string; nonce: string | null; to_address: string | null; data: string | null; value: string | null; gas_limit: string | null;
  signed_block?: string | null;
};
type AttemptRow = { hash: Hex; raw: Hex; attempt: number; max_fee_per_gas: string; max_priority_fee_per_gas: string; waited_ms: string; accepted: boolean };

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
 */
export class PayoutWorker {
  private readonly nativeAssets = new Map<bigint, Asset>();
  /** Chains whose vault was checked, and assets whose on-chain decimals match their scale. */
  private readonly checked = new Set<string>();
  private readonly fault: (point: FaultPoint) => void;
  /** The service's clock: payout schedules' windows and the instants of payout events. */
  private readonly now: () => Date;

  constructor(private readonly db: Database, private readonly settlements: Settlements, private readonly options: PayoutWorkerOptions) {
    this.fault = options.fault ?? (() => {});
    this.now = () => db.clock.now();
  }

  private get log() {
    return this.options.log;
  }

  /** One pass over everything: scheduled payouts, then each chain's steps. Errors of one chain are logged, not thrown. */
  async tick(): Promise<{ errors: unknown[] }> {
    const errors: unknown[] = [];
    try {
      await this.schedule();
    } catch (err) {
      errors.push(err);
      this.log.warn({ worker: "payouts", err }, "scheduling payouts failed");
    }
    for (const chain of this.settlements.chains) {
      try {
        await this.tickChain(chain);
      } catch (err) {
        errors.push(err);
        this.log.warn({ worker: "payouts", chain: chain.settings.name, err: errorSummary(err) }, "payout step failed; retrying next tick");
      }
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
    await step(async () => scanDeposits(this.db, chain, await listAssets(this.db, { limit: 1000 })));
    if (errors.length > 0) throw errors[0];
  }

  /** Creates the payouts that policies with an interval schedule call for, once per operator and window. */
  async schedule(): Promise<number> {
    let created = 0;
    for (const policy of await scheduledPolicies(this.db)) {
      const window = scheduleWindow(this.now(), policy.intervalSeconds!);
      const due = await this.db.query<{ operator_id: string; available: string }>(
        `select a.owner_id as operator_id, (b.credits_posted - b.debits_posted - b.debits_pending)::text as available
           from accounts a join account_balances b on b.account_id = a.id
          where a.asset_id = $1 and a.opened_by_service and a.marketplace_id is null and a.code = 'operator_payable'
            and b.credits_posted - b.debits_posted - b.debits_pending >= $2
          order by a.owner_id`,
        [policy.assetId, policy.minAmount.toString()]);
      for (const d of due) {
        // What is payable now: earnings whose money has not been received wait (src/services/funding.ts).
        const payable = payableNow(BigInt(d.available), await awaitingFunds(this.db, d.operator_id, policy.assetId));
        if (payable < policy.minAmount) continue;
        const cap = lowerCap(policy.maxPerPayout, (await getOperatorPayoutLimits(this.db, d.operator_id, policy.assetId)).maxPerPayout);
        try {
          const { replayed } = await createPayout(this.db, this.settlements, {
            // At most the largest payout (the policy's or the operator's); a daily cap that is reached refuses it until the next window.
            operatorId: d.operator_id, asset: policy.assetCode, trigger: "schedule", requestedBy: "scheduler",
            amount: cap !== null && cap < payable ? cap : payable,
            idempotencyKey: `payout-schedule:${policy.assetId}:${d.operator_id}:${window}`,
          });
          if (!replayed) created++;
        } catch (err) {
          // This window's payout exists already (for another amount), or the operator cannot be paid yet.
          if (err instanceof LedgerError) this.log.debug({ worker: "payouts", operator: d.operator_id, code: err.code }, "no scheduled payout");
          else throw err;
        }
      }
    }
    return created;
  }

  private async nativeAsset(chain: EvmChain): Promise<Asset> {
    let asset = this.nativeAssets.get(chain.chainId);
    if (!asset) {
      // By identity (the chain's native token), not by code: two chains may both call theirs "ETH".
      const [row] = await this.db.query<AssetRow & Record<string, unknown>>(
        `select ${ASSET_COLUMNS} from assets where settlement = 'native' and chain_id = $1`, [chain.chainId.toString()]);
      const n = chain.settings.native_asset;
      asset = row ? toAsset(row) : await createAsset(this.db, { code: n.code, scale: n.decimals, settlement: { kind: "native", chainId: Number(chain.chainId) } });
      this.nativeAssets.set(chain.chainId, asset);
    }
    return asset;
  }

  private tokenOf(asset: Asset): string | null {
    return asset.settlement.kind === "erc20" ? asset.settlement.tokenAddress.toLowerCase() : null;
  }

  /** Step 1: group pending payouts into batches, leaving out what cannot be paid now. */
  async batchPending(chain: EvmChain): Promise<void> {
    // Per asset, so that payouts of one asset held back (gas cap, vault short of it) never keep
    // another asset's from being paid.
    const pending = await this.db.query<{ id: string; asset_id: string; amount: string; to_address: string }>(
      `select p.id, p.asset_id, p.amount::text as amount, p.to_address
         from (select distinct asset_id from payouts where status = 'pending' and settlement = 'evm' and chain_id = $1) a
         cross join lateral (select id, asset_id, amount, to_address, created_at from payouts
                              where status = 'pending' and settlement = 'evm' and chain_id = $1 and asset_id = a.asset_id
                                and approval is distinct from 'required'
                              order by created_at, id limit $2) p
        order by p.created_at, p.id`,
      [chain.chainId.toString(), chain.settings.max_batch_size * 10]);
    const byAsset = new Map<string, typeof pending>();
    for (const p of pending) byAsset.set(p.asset_id, [...(byAsset.get(p.asset_id) ?? []), p]);
    if (byAsset.size > 0) await this.checkChain(chain);
    let firstError: unknown;
    for (const [assetId, rows] of byAsset) {
      try {
        await this.batchAsset(chain, assetId, rows);
      } catch (err) {
        // One asset's trouble (a token that reverts, its vault balance) must not hold up the others.
        firstError ??= err;
        if (isRpcUnavailable(err)) break;
      }
    }
    if (firstError !== undefined) throw firstError;
  }

  /**
   * What the vault can still pay of an asset: its balance on chain less the payouts already batched,
   * signed or submitted (a submitted one that is mined is counted twice until it is confirmed, so
   * this errs on the side of waiting).
   */
  private async vaultRoom(chain: EvmChain, asset: Asset, exceptChainTx?: string): Promise<bigint> {
    const { vault } = await chain.treasuryBalance(this.tokenOf(asset));
    const [flight] = await this.db.query<{ amount: string }>(
      `select coalesce(sum(amount), 0)::text as amount from payouts
        where settlement = 'evm' and chain_id = $1 and asset_id = $2 and status in ('batched', 'signed', 'submitted')
          and ($3::uuid is null or chain_tx_id is distinct from $3)`,
      [chain.chainId.toString(), asset.id, exceptChainTx ?? null]);
    const room = vault - BigInt(flight!.amount);
    return room > 0n ? room : 0n;
  }

  private async batchAsset(chain: EvmChain, assetId: string, rows: Array<{ id: string; asset_id: string; amount: string; to_address: string }>): Promise<void> {
    const asset = (await getAsset(this.db, assetId))!;
    const mismatch = await this.decimalsMismatch(chain, asset);
    if (mismatch) {
      await this.note(rows.map((r) => r.id), `waiting: ${mismatch}`);
      this.log.error({ worker: "payouts", chain: chain.settings.name, asset: asset.code }, mismatch);
      return;
    }
    // A vault short of the asset is not a reason to fail a payout: what it cannot cover waits, in
    // the order the payouts were asked for, and is batched once the vault is funded.
    // First fit, oldest first: a payout larger than what is left waits without holding back the
    // smaller ones behind it.
    const room = await this.vaultRoom(chain, asset);
    let left = room;
    const fits: typeof rows = [];
    const waiting: typeof rows = [];
    for (const r of rows) {
      if (BigInt(r.amount) <= left) {
        fits.push(r);
        left -= BigInt(r.amount);
      } else waiting.push(r);
    }
    if (waiting.length > 0) {
      await this.note(waiting.map((r) => r.id), `waiting for funds: the vault can pay ${room} ${asset.code} on chain ${chain.chainId} after the payouts in flight, not this one too; it is paid once the vault is funded`);
      this.log.warn({ worker: "payouts", chain: chain.settings.name, asset: asset.code, waiting: waiting.length, available: room.toString() }, "vault short: payouts wait for funds");
      rows = fits;
    }
    const policy = await getPayoutPolicy(this.db, assetId);
    for (let i = 0; i < rows.length; i += chain.settings.max_batch_size) {
      let items = rows.slice(i, i + chain.settings.max_batch_size).map((r) => ({ payoutId: r.id, to: r.to_address, amount: BigInt(r.amount) }));
      for (let round = 0; items.length > 0 && round < 8; round++) {
        const sim = await chain.simulate(chain.batchCall(this.tokenOf(asset), items));
        if (!sim.ok && sim.failedIndex !== undefined && items[sim.failedIndex]) {
          if ((await this.vaultRoom(chain, asset)) < items.reduce((n, x) => n + x.amount, 0n)) {
            // The vault went short since it was read: wait, fail nobody.
            await this.note(items.map((x) => x.payoutId), `waiting for funds: the vault can no longer pay this batch of ${asset.code} on chain ${chain.chainId}; it is paid once the vault is funded`);
            items = [];
            break;
          }
          const bad = items[sim.failedIndex]!;
          await failPayouts(this.db, [bad.payoutId], `cannot be paid: ${sim.reason}`, ["pending"]);
          this.log.warn({ worker: "payouts", payout: bad.payoutId, reason: sim.reason }, "payout failed in simulation; left out of the batch");
          items = items.filter((x) => x !== bad);
          continue;
        }
        if (!sim.ok) {
          await this.note(items.map((x) => x.payoutId), `waiting: the batch would revert (${sim.reason})`);
          this.log.warn({ worker: "payouts", chain: chain.settings.name, asset: asset.code, reason: sim.reason }, "batch would revert; payouts wait");
          items = [];
          break;
        }
        if (policy.maxGasShareBps === null) break;
        const fees = await chain.fees();
        const perItem = (sim.gas * fees.maxFeePerGas + BigInt(items.length) - 1n) / BigInt(items.length);
        const price = chain.settings.nativePrices.get(asset.code);
        const token = this.tokenOf(asset);
        const share = token === null ? perItem : price ? gasCostInAsset(perItem, chain.settings.native_asset.decimals, asset.scale, price) : null;
        if (share === null) break; // no price to compare with: the cap cannot be applied (docs/payouts.md)
        const over = items.filter((x) => !withinGasCap(x.amount, share, policy.maxGasShareBps));
        if (over.length === 0) break;
        await this.note(over.map((x) => x.payoutId), `waiting: gas (${share} per payout) is above the policy's ${policy.maxGasShareBps} bps cap`);
        items = items.filter((x) => !over.includes(x));
      }
      if (items.length === 0) continue;
      const batchId = await inTransaction(this.db, async (tx) => {
        const locked = await tx.query<{ id: string }>(
          "select id from payouts where id = any($1::uuid[]) and status = 'pending' and approval is distinct from 'required' order by id for update skip locked",
          [pgArray(items.map((x) => x.payoutId))]);
        if (locked.length === 0) return null;
        const id = uuidv7();
        const ids = locked.map((r) => r.id);
        await tx.query("insert into chain_transactions (id, chain_id, asset_id, sender, status) values ($1, $2, $3, $4, 'batched')",
          [id, chain.chainId.toString(), assetId, chain.sender]);
        await tx.query("update payouts set status = 'batched', chain_tx_id = $2, note = null, updated_at = now() where id = any($1::uuid[])", [pgArray(ids), id]);
        await recordPayoutEvents(tx, ids, "batched", this.now(), { chain_tx_id: id });
        return id;
      });
      if (batchId) this.fault("after_batch");
    }
  }

  private async checkChain(chain: EvmChain): Promise<void> {
    const key = `vault:${chain.chainId}`;
    if (this.checked.has(key)) return;
    await chain.checkVault();
    this.checked.add(key);
  }

  /**
   * Ledger amounts are paid as on-chain units as they are: the asset's scale must be the token's
   * decimals (or the native token's), else nothing of it is paid.
   */
  private async decimalsMismatch(chain: EvmChain, asset: Asset): Promise<string | undefined> {
    const key = `asset:${asset.id}`;
    if (this.checked.has(key)) return undefined;
    const token = this.tokenOf(asset);
    const decimals = token === null ? chain.settings.native_asset.decimals : await chain.tokenDecimals(token);
    if (decimals !== asset.scale) return `asset ${asset.code} has scale ${asset.scale} but its ${token === null ? "native token" : `token ${token}`} has ${decimals} decimals`;
    this.checked.add(key);
    return undefined;
  }

  private async note(ids: string[], note: string): Promise<void> {
    await this.db.query("update payouts set note = $2 where id = any($1::uuid[]) and status = 'pending' and note is distinct from $2", [pgArray(ids), note]);
  }

  private async batchItems(tx: Queryable, chainTxId: string, statuses: string[]) {
    const rows = await tx.query<{ id: string; to_address: string; amount: string }>(
      "select id, to_address, amount::text as amount from payouts where chain_tx_id = $1 and status = any($2::text[]) order by id",
      [chainTxId, pgArray(statuses)]);
    return rows.map((r) => ({ payoutId: r.id, to: r.to_address, amount: BigInt(r.amount) }));
  }

  /** Step 2: simulate each batch again, then take a nonce and store the signed transaction. */
  async signBatched(chain: EvmChain): Promise<void> {
    const batches = await this.db.query<BatchRow>(
      "select id, asset_id from chain_transactions where chain_id = $1 and sender = $2 and status = 'batched' order by created_at, id",
      [chain.chainId.toString(), chain.sender]);
    for (const b of batches) {
      const asset = (await getAsset(this.db, b.asset_id))!;
      const items = await this.batchItems(this.db, b.id, ["batched"]);
      if (items.length === 0) {
        await this.db.query("update chain_transactions set status = 'failed', failure_reason = 'no payouts left', updated_at = now() where id = $1 and status = 'batched'", [b.id]);
        continue;
      }
      const call = chain.batchCall(this.tokenOf(asset), items);
      const sim = await chain.simulate(call);
      if (!sim.ok && sim.failedIndex !== undefined && items[sim.failedIndex]) {
        // The vault went short since the batch was made (another signer's payouts, a withdrawal):
        // nobody's payout fails for that; all go back to wait for funds.
        if ((await this.vaultRoom(chain, asset, b.id)) < items.reduce((s, x) => s + x.amount, 0n)) {
          await inTransaction(this.db, async (tx) => {
            await this.requeue(tx, b.id, ["batched"], false, "the vault is short of funds");
            await tx.query("update chain_transactions set status = 'failed', failure_reason = $2, updated_at = now() where id = $1 and status = 'batched'",
              [b.id, "the vault is short of funds; the payouts were queued again"]);
          });
          continue;
        }
        // Isolate: the bad item fails, the others go back to the queue; this batch ends before it had a nonce.
        const bad = items[sim.failedIndex]!;
        await failPayouts(this.db, [bad.payoutId], `cannot be paid: ${sim.reason}`, ["batched"], async (tx) => {
          await this.requeue(tx, b.id, ["batched"], false);
          await tx.query("update chain_transactions set status = 'failed', failure_reason = $2, updated_at = now() where id = $1 and status = 'batched'",
            [b.id, `payout ${bad.payoutId} cannot be paid; the rest were queued again`]);
        });
        continue;
      }
      if (!sim.ok) {
        await this.db.query("update chain_transactions set last_error = $2, updated_at = now() where id = $1", [b.id, `would revert: ${sim.reason}`]);
        continue;
      }
      const fees = await chain.fees();
      const gas = (sim.gas * 12n) / 10n + 5_000n;
      const signedBlock = await chain.head();
      await this.ensureSender(chain);
      const signed = await inTransaction(this.db, async (tx) => {
        const sender = await tx.query<{ next_nonce: string }>(
          "select next_nonce::text as next_nonce from chain_senders where chain_id = $1 and address = $2 for update", [chain.chainId.toString(), chain.sender]);
        const state = await tx.query<{ status: string }>("select status from chain_transactions where id = $1 for update", [b.id]);
        if (state[0]?.status !== "batched") return null;
        const now = await this.batchItems(tx, b.id, ["batched"]);
        if (now.map((x) => x.payoutId).join() !== items.map((x) => x.payoutId).join()) return null; // changed meanwhile: next tick
        const nonce = BigInt(sender[0]!.next_nonce);
        const { hash, raw } = await chain.sign(call, nonce, gas, fees);
        await tx.query(
          `insert into chain_tx_attempts (hash, chain_tx_id, attempt, raw, max_fee_per_gas, max_priority_fee_per_gas) values ($1, $2, 1, $3, $4, $5)`,
          [hash, b.id, raw, fees.maxFeePerGas.toString(), fees.maxPriorityFeePerGas.toString()]);
        await tx.query(
          `update chain_transactions set status = 'signed', nonce = $2, to_address = $3, data = $4, value = $5, gas_limit = $6, signed_block = $7,
                  last_error = null, updated_at = now()
            where id = $1`,
          [b.id, nonce.toString(), call.to, call.data, call.value.toString(), gas.toString(), signedBlock.toString()]);
        await tx.query("update payouts set status = 'signed', updated_at = now() where chain_tx_id = $1 and status = 'batched'", [b.id]);
        await recordPayoutEvents(tx, items.map((x) => x.payoutId), "signed", this.now(), { chain_tx_id: b.id, nonce: nonce.toString(), tx_hash: hash });
        await tx.query("update chain_senders set next_nonce = next_nonce + 1 where chain_id = $1 and address = $2", [chain.chainId.toString(), chain.sender]);
        return hash;
      });
      if (signed) this.fault("after_sign");
    }
  }

  /** The first use of a signer on a chain starts its nonce from the node; afterwards the database decides. */
  private async ensureSender(chain: EvmChain): Promise<void> {
    const rows = await this.db.query("select 1 from chain_senders where chain_id = $1 and address = $2", [chain.chainId.toString(), chain.sender]);
    if (rows.length > 0) return;
    const nonce = await chain.pendingNonce();
    await this.db.query("insert into chain_senders (chain_id, address, next_nonce) values ($1, $2, $3) on conflict do nothing",
      [chain.chainId.toString(), chain.sender, nonce.toString()]);
  }

  private async latestAttempt(db: Queryable, chainTxId: string): Promise<AttemptRow> {
    const rows = await db.query<AttemptRow>(
      `select hash, raw, attempt, max_fee_per_gas::text as max_fee_per_gas, max_priority_fee_per_gas::text as max_priority_fee_per_gas,
              (extract(epoch from clock_timestamp() - coalesce(broadcast_at, created_at)) * 1000)::bigint::text as waited_ms,
              broadcast_at is not null as accepted
         from chain_tx_attempts where chain_tx_id = $1 order by attempt desc limit 1`, [chainTxId]);
    return rows[0]!;
  }

  /**
   * Step 3: broadcast signed transactions, in nonce order. A transaction the node keeps refusing
   * (fees below what it now accepts) is replaced under the same nonce once `replace_after_seconds`
   * have passed; the rest go on (a later nonce waits in the node's pool, harmlessly).
   */
  async broadcastSigned(chain: EvmChain): Promise<void> {
    const batches = await this.db.query<BatchRow>(
      `select id, asset_id, nonce::text as nonce, to_address, data, value::text as value, gas_limit::text as gas_limit
         from chain_transactions where chain_id = $1 and sender = $2 and status = 'signed' order by nonce`,
      [chain.chainId.toString(), chain.sender]);
    let firstError: unknown;
    for (const b of batches) {
      let a = await this.latestAttempt(this.db, b.id);
      try {
        await chain.broadcast(a.raw);
      } catch (err) {
        await this.db.query("update chain_transactions set last_error = $2, updated_at = now() where id = $1", [b.id, `broadcast: ${errorSummary(err)}`]);
        if (BigInt(a.waited_ms) < BigInt(chain.settings.replace_after_seconds) * 1000n) {
          firstError ??= err;
          continue;
        }
        const replaced = await this.replace(chain, b, a, ["signed"]).catch((e: unknown) => {
          firstError ??= e;
          return undefined;
        });
        if (!replaced) {
          firstError ??= err;
          continue;
        }
        a = replaced;
      }
      this.fault("after_broadcast");
      await inTransaction(this.db, async (tx) => {
        await tx.query("update chain_tx_attempts set broadcast_at = coalesce(broadcast_at, now()) where hash = $1", [a.hash]);
        const moved = await tx.query<{ id: string }>(
          "update chain_transactions set status = 'submitted', last_error = null, updated_at = now() where id = $1 and status = 'signed' returning id", [b.id]);
        if (moved.length === 0) return;
        const ids = await tx.query<{ id: string }>("update payouts set status = 'submitted', updated_at = now() where chain_tx_id = $1 and status = 'signed' returning id", [b.id]);
        await recordPayoutEvents(tx, ids.map((r) => r.id), "submitted", this.now(), { tx_hash: a.hash });
      });
    }
    if (firstError !== undefined) throw firstError;
  }

  /** Step 4: follow submitted transactions to a final answer. One batch's failure does not stop the others. */
  async watchSubmitted(chain: EvmChain): Promise<void> {
    const batches = await this.db.query<BatchRow>(
      `select id, asset_id, nonce::text as nonce, to_address, data, value::text as value, gas_limit::text as gas_limit, signed_block::text as signed_block
         from chain_transactions where chain_id = $1 and sender = $2 and status = 'submitted' order by nonce`,
      [chain.chainId.toString(), chain.sender]);
    if (batches.length === 0) return;
    const head = await chain.head();
    let firstError: unknown;
    for (const b of batches) {
      try {
        await this.watch(chain, b, head);
      } catch (err) {
        firstError ??= err;
        await this.db.query("update chain_transactions set last_error = $2, updated_at = now() where id = $1", [b.id, errorSummary(err)]).catch(() => {});
      }
    }
    if (firstError !== undefined) throw firstError;
  }

  private async watch(chain: EvmChain, b: BatchRow, head: bigint): Promise<void> {
    const required = BigInt(chain.settings.confirmations);
    const attempts = await this.db.query<{ hash: Hex }>("select hash from chain_tx_attempts where chain_tx_id = $1 order by attempt", [b.id]);
    let receipt = null;
    for (const a of attempts) {
      receipt = await chain.receipt(a.hash);
      if (receipt) break;
    }
    if (receipt) return this.settleReceipt(chain, b, receipt, head);
    const nonce = BigInt(b.nonce!);
    if ((await chain.nonceAt(head)) > nonce) {
      // The nonce is used, and no attempt of ours has a receipt. Before believing that another
      // transaction took the nonce, look for the vault's payments of these payouts: a node may not
      // find a receipt that exists (pruned index, a lagging fallback node).
      const ids = (await this.db.query<{ id: string }>("select id from payouts where chain_tx_id = $1", [b.id])).map((r) => r.id);
      // From a little before the block it was signed at: a reorg may have mined it lower.
      const since = BigInt(b.signed_block ?? "0") - required;
      const paid = await chain.paidEventsFor(ids, since > 0n ? since : 0n, head);
      if (paid.length > 0) {
        const found = await chain.receipt(paid[0]!.txHash);
        if (found) return this.settleReceipt(chain, b, found, head);
        await this.db.query("update chain_transactions set last_error = $2, updated_at = now() where id = $1",
          [b.id, `its payouts were paid in ${paid[0]!.txHash}, whose receipt the node does not return`]);
        return;
      }
      // Buried deep enough, ours can never be mined.
      const deep = head + 1n >= required ? await chain.nonceAt(head + 1n - required) : 0n;
      if (deep > nonce) await this.endUnpaid(chain, b, "dropped: its nonce was used by another transaction", null);
      return;
    }
    const latest = await this.latestAttempt(this.db, b.id);
    const due = BigInt(latest.waited_ms) >= BigInt(chain.settings.replace_after_seconds) * 1000n;
    if (!(await chain.knows(latest.hash))) {
      // Lost by the node (restart, eviction, a reorg): send the very same bytes again; if the node
      // refuses them now (fees too low), replace them under the same nonce.
      try {
        await chain.broadcast(latest.raw);
        this.log.info({ worker: "payouts", chain_tx: b.id, tx_hash: latest.hash }, "re-sent a transaction the node had lost");
      } catch (err) {
        if (!due || !(await this.replace(chain, b, latest, ["submitted"]))) throw err;
      }
      return;
    }
    if (due) await this.replace(chain, b, latest, ["submitted"]);
  }

  private async settleReceipt(chain: EvmChain, b: BatchRow, receipt: NonNullable<Awaited<ReturnType<EvmChain["receipt"]>>>, head: bigint): Promise<void> {
    if (head - receipt.blockNumber + 1n < BigInt(chain.settings.confirmations)) return;
    // The node's receipt is from its canonical chain, but a reorg may land between calls: check again.
    if ((await chain.blockHash(receipt.blockNumber)) !== receipt.blockHash) return;
    await this.finish(chain, b, receipt);
  }

  /**
   * A stuck or refused transaction: the same call under the same nonce, with fees raised (never a
   * new payload: only one of the attempts can ever be mined). Returns the new attempt, stored
   * before it is broadcast.
   */
  private async replace(chain: EvmChain, b: BatchRow, latest: AttemptRow, statuses: string[]): Promise<AttemptRow | undefined> {
    const previous = { maxFeePerGas: BigInt(latest.max_fee_per_gas), maxPriorityFeePerGas: BigInt(latest.max_priority_fee_per_gas) };
    const current = await chain.fees();
    // An attempt the node never accepted needs no outbidding: re-sign it only when the network now
    // asks for more than it offered (the refusal may have nothing to do with fees, e.g. no gas).
    if (!latest.accepted && current.maxFeePerGas <= previous.maxFeePerGas && current.maxPriorityFeePerGas <= previous.maxPriorityFeePerGas) return undefined;
    const fees = latest.accepted ? bumpFees(previous, current) : bumpFees(current, current);
    const cap = chain.settings.max_fee_per_gas_gwei === undefined ? undefined : BigInt(Math.floor(chain.settings.max_fee_per_gas_gwei * 1e9));
    if (cap !== undefined && fees.maxFeePerGas > cap) {
      if (previous.maxFeePerGas >= cap) {
        await this.db.query("update chain_transactions set last_error = $2, updated_at = now() where id = $1", [b.id, `fees reached max_fee_per_gas_gwei (${chain.settings.max_fee_per_gas_gwei}); not replaced`]);
        return undefined;
      }
      fees.maxFeePerGas = cap;
      if (fees.maxPriorityFeePerGas > cap) fees.maxPriorityFeePerGas = cap;
    }
    const call = { to: b.to_address as `0x${string}`, data: b.data as Hex, value: BigInt(b.value!) };
    const { hash, raw } = await chain.sign(call, BigInt(b.nonce!), BigInt(b.gas_limit!), fees);
    const stored = await inTransaction(this.db, async (tx) => {
      const state = await tx.query<{ status: string }>("select status from chain_transactions where id = $1 for update", [b.id]);
      if (!statuses.includes(state[0]?.status ?? "") || (await this.latestAttempt(tx, b.id)).attempt !== latest.attempt) return false;
      await tx.query(
        `insert into chain_tx_attempts (hash, chain_tx_id, attempt, raw, max_fee_per_gas, max_priority_fee_per_gas) values ($1, $2, $3, $4, $5, $6)`,
        [hash, b.id, latest.attempt + 1, raw, fees.maxFeePerGas.toString(), fees.maxPriorityFeePerGas.toString()]);
      const ids = await tx.query<{ id: string }>("select id from payouts where chain_tx_id = $1 and status = any($2::text[])", [b.id, pgArray(statuses)]);
      await recordPayoutEvents(tx, ids.map((r) => r.id), statuses[0] as "signed" | "submitted", this.now(), { tx_hash: hash, replaces: latest.hash, attempt: latest.attempt + 1 });
      return true;
    });
    if (!stored) return undefined;
    await chain.broadcast(raw);
    await this.db.query("update chain_tx_attempts set broadcast_at = now() where hash = $1", [hash]);
    this.log.info({ worker: "payouts", chain_tx: b.id, tx_hash: hash, replaces: latest.hash, max_fee_per_gas: fees.maxFeePerGas.toString() }, "replaced a stuck transaction");
    return this.latestAttempt(this.db, b.id);
  }

  private gasTransfer(chain: EvmChain, native: Asset, chainTxId: string, fee: bigint, accounts: Map<string, string>): TransferInput[] {
    if (fee === 0n) return [];
    return [{
      kind: "standard", idempotencyKey: `chain-tx:${chainTxId}:gas`, metadata: { chain_tx: { id: chainTxId } },
      legs: [{
        debitAccountId: accounts.get(specKey(chart.gasExpense(native.id, chain.chainId.toString())))!,
        creditAccountId: accounts.get(specKey(chart.treasury(native.id, chain.chainId.toString())))!, amount: fee,
      }],
    }];
  }

  private async gasAccounts(chain: EvmChain, native: Asset) {
    return ensureAccounts(this.db, [chart.gasExpense(native.id, chain.chainId.toString()), chart.treasury(native.id, chain.chainId.toString())]);
  }

  /** A mined, buried, canonical receipt: confirm the payouts (success) or end them unpaid (revert). */
  private async finish(chain: EvmChain, b: BatchRow, receipt: NonNullable<Awaited<ReturnType<EvmChain["receipt"]>>>): Promise<void> {
    const native = await this.nativeAsset(chain);
    const fee = receipt.gasUsed * receipt.effectiveGasPrice;
    if (receipt.status !== "success") {
      await this.endUnpaid(chain, b, "reverted on chain", { receipt, fee, native });
      return;
    }
    const rows = await this.db.query<Parameters<typeof toPayout>[0]>(`${PAYOUT_SELECT} where p.chain_tx_id = $1 and p.status in ('signed', 'submitted') order by p.id`, [b.id]);
    const payouts = rows.map(toPayout);
    const asset = (await getAsset(this.db, b.asset_id))!;
    const token = this.tokenOf(asset) ?? ZERO_ADDRESS;
    const events = chain.paidEvents(receipt);
    const details = new Map<string, { txHash: string; blockNumber: bigint; logIndex: number }>();
    const mismatches: string[] = [];
    for (const p of payouts) {
      const ev = events.find((e) => e.payoutId === p.id);
      if (!ev || ev.amount !== p.amount || ev.recipient !== p.toAddress || ev.token !== token) mismatches.push(p.id);
      else details.set(p.id, { txHash: receipt.transactionHash, blockNumber: receipt.blockNumber, logIndex: ev.logIndex });
    }
    if (mismatches.length > 0) {
      // Never expected (the vault emits what it was told to pay): stop and let a human look.
      await this.db.query("update chain_transactions set last_error = $2, updated_at = now() where id = $1", [b.id, `Paid events do not match payouts ${mismatches.join(", ")}`]);
      this.log.error({ worker: "payouts", chain_tx: b.id, tx_hash: receipt.transactionHash, payouts: mismatches }, "mined transaction's events do not match its payouts; not confirmed");
      return;
    }
    this.fault("before_settle");
    const accounts = await this.gasAccounts(chain, native);
    await confirmPayouts(this.db, payouts, details, ["signed", "submitted"], this.gasTransfer(chain, native, b.id, fee, accounts), async (tx) => {
      await tx.query(
        `update chain_transactions set status = 'confirmed', tx_hash = $2, block_number = $3, block_hash = $4, gas_used = $5, fee = $6, last_error = null, updated_at = now()
          where id = $1 and status in ('signed', 'submitted')`,
        [b.id, receipt.transactionHash, receipt.blockNumber.toString(), receipt.blockHash, receipt.gasUsed.toString(), fee.toString()]);
    });
    this.log.info({ worker: "payouts", chain_tx: b.id, tx_hash: receipt.transactionHash, payouts: payouts.length }, "payouts confirmed");
    this.fault("after_settle");
  }

  /**
   * The transaction ended without paying: payouts it carried alone fail (it was theirs to fail);
   * payouts of a larger batch go back to the queue to be tried again, isolated by simulation, and
   * fail once they have ridden MAX_UNPAID_ATTEMPTS such transactions. Gas spent is booked.
   */
  private async endUnpaid(chain: EvmChain, b: BatchRow, reason: string, mined: { receipt: NonNullable<Awaited<ReturnType<EvmChain["receipt"]>>>; fee: bigint; native: Asset } | null) {
    const rows = await this.db.query<{ id: string; unpaid_attempts: number; amount: string }>(
      "select id, unpaid_attempts, amount::text as amount from payouts where chain_tx_id = $1 and status in ('signed', 'submitted')", [b.id]);
    // A batch that reverted because the vault was short (the vault paid out by other means
    // meanwhile) fails nobody's payout: all wait for funds, and the attempt is not counted.
    const asset = (await getAsset(this.db, b.asset_id))!;
    const short = mined !== null && (await this.vaultRoom(chain, asset, b.id)) < rows.reduce((n, r) => n + BigInt(r.amount), 0n);
    const alone = rows.length === 1 && mined !== null && !short;
    const toFail = short ? [] : rows.filter((r) => alone || r.unpaid_attempts + 1 >= MAX_UNPAID_ATTEMPTS).map((r) => r.id);
    if (short) reason = `${reason}: the vault is short of funds`;
    const accounts = mined ? await this.gasAccounts(chain, mined.native) : new Map<string, string>();
    let moved = false;
    await writeTransfers(this.db, async (tx) => {
      const state = await tx.query<{ status: string }>("select status from chain_transactions where id = $1 for update", [b.id]);
      moved = state[0]?.status === "submitted";
      if (!moved) return [];
      const holds = await tx.query<{ id: string; hold_transfer_id: string }>(
        "select id, hold_transfer_id from payouts where id = any($1::uuid[]) and status in ('signed', 'submitted') order by id for update", [pgArray(toFail)]);
      return [
        ...holds.map((h): TransferInput => ({ kind: "void_pending", pendingId: h.hold_transfer_id, idempotencyKey: `payout:${h.id}:void`, metadata: { payout: { id: h.id, reason } } })),
        ...(mined ? this.gasTransfer(chain, mined.native, b.id, mined.fee, accounts) : []),
      ];
    }, {
      afterWrite: async (tx, outcomes) => {
        for (const o of outcomes) if (o.kind === "refused") throw o.error;
        if (!moved) return;
        if (toFail.length > 0) {
          await tx.query("update payouts set status = 'failed', failure_reason = $2, unpaid_attempts = unpaid_attempts + 1, updated_at = now() where id = any($1::uuid[]) and status in ('signed', 'submitted')",
            [pgArray(toFail), reason]);
          await recordPayoutEvents(tx, toFail, "failed", this.now(), { reason, chain_tx_id: b.id });
        }
        await this.requeue(tx, b.id, ["signed", "submitted"], !short, reason);
        await tx.query(
          `update chain_transactions set status = 'failed', failure_reason = $2, tx_hash = $3, block_number = $4, block_hash = $5, gas_used = $6, fee = $7, updated_at = now()
            where id = $1`,
          [b.id, reason, mined?.receipt.transactionHash ?? null, mined?.receipt.blockNumber.toString() ?? null, mined?.receipt.blockHash ?? null,
            mined?.receipt.gasUsed.toString() ?? null, mined?.fee.toString() ?? null]);
      },
    });
    if (moved) this.log.warn({ worker: "payouts", chain_tx: b.id, reason, failed: toFail.length, requeued: rows.length - toFail.length }, "chain transaction ended without paying");
  }

  private async requeue(tx: Queryable, chainTxId: string, from: string[], countAttempt: boolean, reason?: string): Promise<void> {
    const ids = await tx.query<{ id: string }>(
      `update payouts set status = 'pending', chain_tx_id = null, unpaid_attempts = unpaid_attempts + $3, updated_at = now()
        where chain_tx_id = $1 and status = any($2::text[]) returning id`,
      [chainTxId, pgArray(from), countAttempt ? 1 : 0]);
    await recordPayoutEvents(tx, ids.map((r) => r.id), "pending", this.now(), { requeued_from: chainTxId, reason: reason ?? "batch isolated a bad item" });
  }
}

function errorSummary(err: unknown): string {
  if (err && typeof err === "object" && "shortMessage" in err) return String((err as { shortMessage: string }).shortMessage);
  return err instanceof Error ? err.message : String(err);
}
