export interface UsageRecord {
  id: string;
  marketplaceId: string;
  externalId: string;
  requestHash: string;
  operatorId: string;
  customerId: string;
  resource: string;
  unit: string;
  quantity: string;
  unitPrice: string | null;
  assetId: string;
  gross: bigint;
  net: bigint;
  fees: { party: string; accountId: string; amount: bigint }[];
  feeScheduleVersion: number | null;
  periodStart: Date;
  periodEnd: Date;
  effectiveAt: Date;
  holdId: string | null;
  transferId: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
  /** posted, or reversed once a correction undid it */
  status: "posted" | "reversed";
}
