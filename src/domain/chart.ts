/** The chart of accounts: which accounts the service opens for usage, holds, deposits and payouts. */
/** An account of the chart of accounts, named by its ref (unique per asset and marketplace). */
export interface AccountSpec {
  assetId: string;
  marketplaceId: string | null;
  ref: string;
  code: string;
  ownerType: string;
  ownerId: string;
  normalSide: "debit" | "credit";
  debitsMustNotExceedCredits?: boolean;
  /** The opposite limit: the account's credits may not pass its debits (a receivable recovered no further than it is owed). */
  creditsMustNotExceedDebits?: boolean;
  /** With the no-overdraft limit: how far debits may exceed credits when the account is opened (a postpaid customer's credit limit). */
  overdraftLimit?: bigint;
}

export const specKey = (s: Pick<AccountSpec, "assetId" | "marketplaceId" | "ref">) => `${s.assetId}|${s.marketplaceId ?? ""}|${s.ref}`;

const RESERVED_PREFIXES = ["customer:", "operator:", "hold:", "deposits:", "payouts:", "treasury:", "expense:", "protocol:", "conversion:", "fx:"];

/**
 * Refs of the chart below, which only the service opens: an account opened through the API may not
 * take one (a tenant's "protocol:fees" would otherwise look like the protocol's revenue, and a
 * "customer:c1" opened without its no-overdraft limit would be used as the customer's balance).
 */
export function isReservedRef(ref: string): boolean {
  return RESERVED_PREFIXES.some((p) => ref.startsWith(p)) || ref.endsWith(":fees");
}

/** The chart of accounts for usage (docs/usage.md) and payouts (docs/payouts.md). */
export const chart = {
  /**
   * A customer's balance. Neither kind overdraws beyond its limit: a prepaid customer's is 0, a
   * postpaid customer's is its credit limit in the asset (`overdraftLimit`, 0 in an asset it has none in).
   */
  customer: (assetId: string, marketplaceId: string, customerId: string, prepaid: boolean): AccountSpec => ({
    assetId,
    marketplaceId,
    ref: `customer:${customerId}`,
    code: prepaid ? "customer_prepaid" : "customer_postpaid",
    ownerType: "customer",
    ownerId: customerId,
    normalSide: "credit",
    debitsMustNotExceedCredits: true,
  }),
  operatorPayable: (assetId: string, operatorId: string): AccountSpec => ({
    assetId,
    marketplaceId: null,
    ref: `operator:${operatorId}:payable`,
    code: "operator_payable",
    ownerType: "operator",
    ownerId: operatorId,
    normalSide: "credit",
    debitsMustNotExceedCredits: true,
  }),
  /**
   * What an operator owes the platform in an asset (debit-normal: an asset of the platform), the one
   * exception to its payable's no-overdraft rule (docs/ledger.md, "Clawbacks"): when a reversal takes
   * back earnings it was already paid, the shortfall is booked here (receivable → payable) instead of
   * overdrawing the payable, and its next earnings pay it back (payable → receivable) before anything
   * else is payable. Never credited beyond what is owed.
   */
  operatorReceivable: (assetId: string, operatorId: string): AccountSpec => ({
    assetId,
    marketplaceId: null,
    ref: `operator:${operatorId}:receivable`,
    code: "operator_receivable",
    ownerType: "operator",
    ownerId: operatorId,
    normalSide: "debit",
    creditsMustNotExceedDebits: true,
  }),
  fees: (assetId: string, marketplaceId: string, party: string): AccountSpec =>
    party === "protocol"
      ? { assetId, marketplaceId: null, ref: "protocol:fees", code: "protocol_fees", ownerType: "platform", ownerId: "protocol", normalSide: "credit" }
      : {
          assetId,
          marketplaceId,
          ref: `${party}:fees`,
          code: `${party}_fees`,
          ownerType: party === "marketplace" ? "marketplace" : "fee_party",
          ownerId: party === "marketplace" ? marketplaceId : party,
          normalSide: "credit",
        },
  holdEscrow: (assetId: string, marketplaceId: string, holdId: string, customerId: string): AccountSpec => ({
    assetId,
    marketplaceId,
    ref: `hold:${holdId}`,
    code: "customer_hold",
    ownerType: "customer",
    ownerId: customerId,
    normalSide: "credit",
    debitsMustNotExceedCredits: true,
  }),
  depositClearing: (assetId: string, marketplaceId: string): AccountSpec => ({
    assetId,
    marketplaceId,
    ref: "deposits:clearing",
    code: "deposit_clearing",
    ownerType: "marketplace",
    ownerId: marketplaceId,
    normalSide: "debit",
  }),
  /** Funds held for payouts on their way out, per settlement route ("{chainId}" or "offchain"). */
  payoutsInTransit: (assetId: string, route: string): AccountSpec => ({
    assetId,
    marketplaceId: null,
    ref: `payouts:in_transit:${route}`,
    code: "payouts_in_transit",
    ownerType: "platform",
    ownerId: "treasury",
    normalSide: "credit",
  }),
  /** The treasury that pays out (an asset of the platform): credited as payouts leave it. */
  treasury: (assetId: string, route: string): AccountSpec => ({
    assetId,
    marketplaceId: null,
    ref: `treasury:${route}`,
    code: "treasury",
    ownerType: "platform",
    ownerId: "treasury",
    normalSide: "debit",
  }),
  /** Gas spent by the treasury's transactions, in the chain's native asset. */
  gasExpense: (nativeAssetId: string, chainId: string): AccountSpec => ({
    assetId: nativeAssetId,
    marketplaceId: null,
    ref: `expense:gas:${chainId}`,
    code: "gas_expense",
    ownerType: "platform",
    ownerId: "treasury",
    normalSide: "debit",
  }),
  /**
   * The platform's conversion (trading) account in one asset against another (docs/settlement.md):
   * in the asset paid out, its balance is the platform's position in it (negative: given out); in the
   * earnings asset, what the position cost, marked to the latest rate used.
   */
  conversion: (assetId: string, counterCode: string): AccountSpec => ({
    assetId,
    marketplaceId: null,
    ref: `conversion:${counterCode}`,
    code: "conversion",
    ownerType: "platform",
    ownerId: "fx",
    normalSide: "credit",
  }),
  /** Gains (credit) and losses (debit) from rate movements on the platform's positions, in the earnings asset. */
  fxGainsLosses: (assetId: string): AccountSpec => ({
    assetId,
    marketplaceId: null,
    ref: "fx:gains_losses",
    code: "fx_gains_losses",
    ownerType: "platform",
    ownerId: "fx",
    normalSide: "credit",
  }),
};
