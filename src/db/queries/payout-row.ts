import type { PayoutStatus } from "../../domain/payouts.js";

/** A split of an operator's payout preference: `bps` of each payout in `asset`. */
export interface PayoutSplit {
  asset_id: string;
  asset: string;
  bps: number;
}

export interface Payout {
  id: string;
  operatorId: string;
  assetId: string;
  assetCode: string;
  /** The asset's decimals, for display. */
  assetScale: number;
  settlement: "evm" | "none" | "convert";
  chainId: bigint | null;
  toAddress: string | null;
  amount: bigint;
  status: PayoutStatus;
  trigger: "request" | "schedule";
  requestedBy: string;
  holdTransferId: string;
  settleTransferId: string | null;
  chainTxId: string | null;
  txHash: string | null;
  blockNumber: bigint | null;
  logIndex: number | null;
  externalReference: string | null;
  unpaidAttempts: number;
  failureReason: string | null;
  note: string | null;
  /** null: no approval needed; required: waits for a second key; approved. */
  approval: "required" | "approved" | null;
  /** Of a convert payout: the operator's payout preference when it was requested. */
  splits: PayoutSplit[] | null;
  /** Of a payout that pays part of a converted one: that payout. */
  parentPayoutId: string | null;
  createdAt: Date;
  updatedAt: Date;
  confirmedAt: Date | null;
}

export type PayoutRow = {
  id: string;
  operator_id: string;
  asset_id: string;
  asset_code: string;
  asset_scale: number;
  settlement: "evm" | "none" | "convert";
  chain_id: string | null;
  to_address: string | null;
  amount: string;
  status: PayoutStatus;
  trigger: "request" | "schedule";
  requested_by: string;
  hold_transfer_id: string;
  settle_transfer_id: string | null;
  chain_tx_id: string | null;
  tx_hash: string | null;
  block_number: string | null;
  log_index: number | null;
  external_reference: string | null;
  unpaid_attempts: number;
  failure_reason: string | null;
  note: string | null;
  approval: "required" | "approved" | null;
  splits: PayoutSplit[] | null;
  parent_payout_id: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  confirmed_at: Date | string | null;
};

export const PAYOUT_SELECT = `select p.id, p.operator_id, p.asset_id, s.code as asset_code, s.scale as asset_scale, p.settlement, p.chain_id::text as chain_id, p.to_address,
  p.amount::text as amount, p.status, p.trigger, p.requested_by, p.hold_transfer_id, p.settle_transfer_id, p.chain_tx_id, p.tx_hash,
  p.block_number::text as block_number, p.log_index, p.external_reference, p.unpaid_attempts, p.failure_reason, p.note, p.approval,
  p.splits, p.parent_payout_id, p.created_at, p.updated_at, p.confirmed_at
  from payouts p join assets s on s.id = p.asset_id`;

export function toPayout(r: PayoutRow): Payout {
  return {
    id: r.id,
    operatorId: r.operator_id,
    assetId: r.asset_id,
    assetCode: r.asset_code,
    assetScale: r.asset_scale,
    settlement: r.settlement,
    chainId: r.chain_id === null ? null : BigInt(r.chain_id),
    toAddress: r.to_address,
    amount: BigInt(r.amount),
    status: r.status,
    trigger: r.trigger,
    requestedBy: r.requested_by,
    holdTransferId: r.hold_transfer_id,
    settleTransferId: r.settle_transfer_id,
    chainTxId: r.chain_tx_id,
    txHash: r.tx_hash,
    blockNumber: r.block_number === null ? null : BigInt(r.block_number),
    logIndex: r.log_index,
    externalReference: r.external_reference,
    unpaidAttempts: r.unpaid_attempts,
    failureReason: r.failure_reason,
    note: r.note,
    approval: r.approval,
    splits: r.splits,
    parentPayoutId: r.parent_payout_id,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    confirmedAt: r.confirmed_at === null ? null : new Date(r.confirmed_at),
  };
}
