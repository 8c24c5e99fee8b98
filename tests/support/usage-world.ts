import { usageMonth } from "./clock.js";
import type { Database } from "../../src/db/client.js";
import { ensureAccounts } from "../../src/db/ensure-accounts.js";
import { chart, specKey } from "../../src/domain/chart.js";
import { getBalance } from "../../src/db/queries/accounts.js";
import type { LedgerContext } from "../../src/services/context.js";
import { createAsset } from "../../src/services/create-asset.js";
import { depositForCustomer } from "../../src/services/customer-deposits.js";
import { publishFeeSchedule } from "../../src/services/fee-schedules.js";
import type { UsageInput } from "../../src/services/ingest-usage.js";
import { createCustomer, createMarketplace, registerOperator } from "../../src/services/marketplaces.js";

let n = 0;

/**
 * A marketplace with a fee schedule (marketplace 10%, protocol 1% with a 1-unit minimum), three
 * registered operators, a prepaid customer funded with `funds` and a postpaid customer.
 */
export async function usageWorld(ctx: LedgerContext, funds = 1_000_000_000n) {
  const db = ctx.db;
  const tag = `${++n}${Date.now() % 100000}`;
  const asset = await createAsset(db, { code: `USDC${tag}`, scale: 6, settlement: { kind: "offchain" } });
  const m = `m${tag}`;
  await createMarketplace(db, { id: m, name: "GPU market" });
  await publishFeeSchedule(db, {
    marketplaceId: m,
    effectiveFrom: new Date("2020-01-01T00:00:00Z"),
    rules: [
      { party: "marketplace", bps: 1000 },
      { party: "protocol", bps: 100, min: { [asset.code]: "1" } },
    ],
  });
  const operators = ["op1", "op2", "op3"].map((o) => `${o}-${tag}`);
  for (const o of operators) await registerOperator(db, { id: o, name: o, marketplaceId: m });
  await createCustomer(db, { marketplaceId: m, id: "prepaid", billing: "prepaid" });
  await createCustomer(db, { marketplaceId: m, id: "postpaid", billing: "postpaid", creditLimits: [{ asset: asset.code, creditLimit: 10n ** 24n }] });
  if (funds > 0n) {
    const r = await depositForCustomer(ctx, { marketplaceId: m, customerId: "prepaid", asset: asset.code, amount: funds, idempotencyKey: `fund-${tag}` });
    if (!r.ok) throw new Error(r.error.message);
  }
  const accounts = await ensureAccounts(db, [
    chart.customer(asset.id, m, "prepaid", true),
    chart.customer(asset.id, m, "postpaid", false),
    chart.fees(asset.id, m, "marketplace"),
    chart.fees(asset.id, m, "protocol"),
    ...operators.map((o) => chart.operatorPayable(asset.id, o)),
  ]);
  const id = (spec: Parameters<typeof specKey>[0]) => accounts.get(specKey(spec))!;
  const record = (externalId: string, extra: Partial<UsageInput> = {}): UsageInput => ({
    externalId,
    operatorId: operators[0]!,
    customerId: "prepaid",
    resource: "gpu:h100-80gb",
    unit: "gpu_second",
    quantity: "3600",
    unitPrice: "0.000694",
    asset: asset.code,
    periodStart: usageMonth.day(10),
    periodEnd: usageMonth.day(11),
    ...extra,
  });
  const posted = async (accountId: string) => (await getBalance(db, accountId))!.posted;
  return {
    asset,
    m,
    operators,
    record,
    posted,
    accounts: {
      prepaid: id({ assetId: asset.id, marketplaceId: m, ref: "customer:prepaid" }),
      postpaid: id({ assetId: asset.id, marketplaceId: m, ref: "customer:postpaid" }),
      marketplaceFees: id({ assetId: asset.id, marketplaceId: m, ref: "marketplace:fees" }),
      protocolFees: id({ assetId: asset.id, marketplaceId: null, ref: "protocol:fees" }),
      operator: (i: number) => id({ assetId: asset.id, marketplaceId: null, ref: `operator:${operators[i]}:payable` }),
    },
  };
}

export type UsageWorld = Awaited<ReturnType<typeof usageWorld>>;
export const sumOf = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);
export type { Database };
