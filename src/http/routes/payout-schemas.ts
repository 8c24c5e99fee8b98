import { z } from "@hono/zod-openapi";
import { payoutStatuses } from "../../domain/payouts.js";
import type { Payout } from "../../services/payouts.js";
import type { PayoutPolicy } from "../../services/payout-policies.js";
import { display, DisplayAmount, displayOrNull } from "../display.js";
import { Timestamp, Uuid } from "../schemas.js";

export const ChainId = z.number().int().positive().max(Number.MAX_SAFE_INTEGER).openapi({ example: 8453, description: "EVM chain id" });
export const EvmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte hex address")
  .openapi({ example: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" });

export const PayoutOut = z
  .object({
    id: Uuid,
    operator_id: z.string().openapi({ example: "op-datacenter-7" }),
    asset: z.string().openapi({ example: "USDC" }),
    asset_id: Uuid,
    amount: z.string().openapi({ example: "150000000" }),
    amount_display: DisplayAmount,
    settlement: z.enum(["evm", "none", "convert"]).openapi({
      description:
        "evm: paid on chain by the worker; none: paid off-chain and marked paid by finance; convert: converted into the assets of `splits` at the rate of the moment, each part paid by a payout of its own (`parent_payout_id`)",
    }),
    chain_id: z.number().int().nullable(),
    to_address: z.string().nullable(),
    status: z.enum(payoutStatuses),
    trigger: z.enum(["request", "schedule"]),
    requested_by: z.string().openapi({
      description: "the id of the API key that asked for the payout (`bootstrap-admin`: the key from ADMIN_API_KEY; `scheduler`: the payout schedule)",
    }),
    hold_transfer_id: Uuid,
    settle_transfer_id: Uuid.nullable(),
    chain_tx_id: Uuid.nullable(),
    tx_hash: z.string().nullable(),
    block_number: z.string().nullable(),
    log_index: z.number().int().nullable(),
    external_reference: z.string().nullable(),
    failure_reason: z.string().nullable(),
    note: z.string().nullable().openapi({ description: "why the worker is holding the payout back, if it is" }),
    approval: z.enum(["required", "approved"]).nullable().openapi({
      description: "required: above the policy's approval threshold, it waits for a second key (POST /v1/proposals/{id}/approve); approved; null: none needed",
    }),
    splits: z
      .array(z.object({ asset: z.string().openapi({ example: "USDC" }), bps: z.number().int().openapi({ example: 7000 }) }))
      .nullable()
      .openapi({
        description: "of a convert payout: the operator's payout preference when it was requested (GET /v1/conversions?payout_id= shows what each part became)",
      }),
    parent_payout_id: Uuid.nullable().openapi({ description: "of a payout that pays one part of a converted payout: that payout" }),
    created_at: Timestamp,
    updated_at: Timestamp,
    confirmed_at: Timestamp.nullable(),
  })
  .openapi("Payout");

export const payoutOut = (p: Payout) => ({
  id: p.id,
  operator_id: p.operatorId,
  asset: p.assetCode,
  asset_id: p.assetId,
  amount: p.amount.toString(),
  amount_display: display(p.amount, p.assetScale),
  settlement: p.settlement,
  chain_id: p.chainId === null ? null : Number(p.chainId),
  to_address: p.toAddress,
  status: p.status,
  trigger: p.trigger,
  requested_by: p.requestedBy,
  hold_transfer_id: p.holdTransferId,
  settle_transfer_id: p.settleTransferId,
  chain_tx_id: p.chainTxId,
  tx_hash: p.txHash,
  block_number: p.blockNumber?.toString() ?? null,
  log_index: p.logIndex,
  external_reference: p.externalReference,
  failure_reason: p.failureReason,
  note: p.note,
  approval: p.approval,
  splits: p.splits?.map((x) => ({ asset: x.asset, bps: x.bps })) ?? null,
  parent_payout_id: p.parentPayoutId,
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
  confirmed_at: p.confirmedAt?.toISOString() ?? null,
});

export const PayoutPolicyOut = z
  .object({
    asset: z.string(),
    asset_id: Uuid,
    min_amount: z.string(),
    min_amount_display: DisplayAmount,
    schedule: z.enum(["manual", "interval"]),
    interval_seconds: z.number().int().nullable(),
    max_gas_share_bps: z.number().int().nullable(),
    max_per_payout: z.string().nullable(),
    max_per_payout_display: DisplayAmount.nullable(),
    max_per_day: z.string().nullable(),
    max_per_day_display: DisplayAmount.nullable(),
    approval_threshold: z.string().nullable().openapi({ description: "payouts above it wait for a second key's approval; null: none do" }),
    approval_threshold_display: DisplayAmount.nullable(),
    updated_by: z.string().nullable(),
    updated_at: Timestamp.nullable(),
  })
  .openapi("PayoutPolicy");

/** A policy, each amount with its display twin at `scale`, its asset's. */
export const policyOut = (p: PayoutPolicy, scale: number) => ({
  asset: p.assetCode,
  asset_id: p.assetId,
  min_amount: p.minAmount.toString(),
  min_amount_display: display(p.minAmount, scale),
  schedule: p.schedule,
  interval_seconds: p.intervalSeconds,
  max_gas_share_bps: p.maxGasShareBps,
  max_per_payout: p.maxPerPayout?.toString() ?? null,
  max_per_payout_display: displayOrNull(p.maxPerPayout, scale),
  max_per_day: p.maxPerDay?.toString() ?? null,
  max_per_day_display: displayOrNull(p.maxPerDay, scale),
  approval_threshold: p.approvalThreshold?.toString() ?? null,
  approval_threshold_display: displayOrNull(p.approvalThreshold, scale),
  updated_by: p.updatedBy,
  updated_at: p.updatedAt?.toISOString() ?? null,
});
