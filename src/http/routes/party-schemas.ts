import { z } from "@hono/zod-openapi";
import type { Customer as CustomerRecord } from "../../services/marketplaces.js";
import { display, DisplayAmount } from "../display.js";
import { Metadata, Timestamp } from "../schemas.js";

/** The id of a marketplace, operator or customer, chosen by whoever registers it (path, body or filter). */
export const PartyIdParam = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, "must be 1-64 characters of a-z, 0-9, '_', '.' or '-'")
  .openapi({ example: "gpu-market" });
/** The same, with an example of each kind of party. */
export const MarketplaceId = PartyIdParam.openapi({ example: "gpu-market" });
export const OperatorId = PartyIdParam.openapi({ example: "op-datacenter-7" });
export const CustomerId = PartyIdParam.openapi({ example: "acme-ai" });

export const Marketplace = z
  .object({
    id: z.string().openapi({ example: "gpu-market" }),
    name: z.string().openapi({ example: "GPU Market" }),
    metadata: Metadata,
    pricing_asset: z.string().nullable().optional().openapi({
      example: "USD",
      description:
        "the asset its usage is priced in, which its operators' payout preferences convert from (PUT /v1/marketplaces/{id}/pricing-currency); null: none set",
    }),
    rate_policy: z.enum(["at_payout", "at_earning"]).openapi({
      description: "when its operators' converted earnings get their rate: at the payout's conversion (at_payout) or when the usage is recorded (at_earning)",
    }),
    created_at: Timestamp,
  })
  .openapi("Marketplace");
export const Operator = z
  .object({
    id: z.string().openapi({ example: "op-datacenter-7" }),
    name: z.string().openapi({ example: "Datacenter 7" }),
    marketplace_ids: z.array(z.string()).openapi({ example: ["gpu-market"] }),
    metadata: Metadata,
    created_at: Timestamp,
  })
  .openapi("Operator");
export const CreditLimit = z
  .object({
    asset: z.string().openapi({ example: "USDC" }),
    credit_limit: z.string().openapi({ example: "500000000", description: "how much the customer may owe in the asset, in its smallest units" }),
    credit_limit_display: DisplayAmount.openapi({ example: "500" }),
  })
  .openapi("CustomerCreditLimit");

export const Customer = z
  .object({
    marketplace_id: z.string().openapi({ example: "gpu-market" }),
    id: z.string().openapi({ example: "acme-ai" }),
    billing: z.enum(["prepaid", "postpaid"]),
    metadata: Metadata,
    credit_limits: z
      .array(CreditLimit)
      .openapi({ description: "postpaid: the credit limit in each asset; usage beyond it, or in another asset, is refused (credit_limit_exceeded)" }),
    created_at: Timestamp,
    retired_at: Timestamp.nullable().openapi({ description: "when it was retired: no new usage, holds or prepaid deposits for it; null while in use" }),
  })
  .openapi("Customer");

export const customerOut = (cu: CustomerRecord) => ({
  marketplace_id: cu.marketplaceId,
  id: cu.id,
  billing: cu.billing,
  metadata: cu.metadata,
  credit_limits: cu.creditLimits.map((l) => ({
    asset: l.asset,
    credit_limit: l.creditLimit.toString(),
    credit_limit_display: display(l.creditLimit, l.scale),
  })),
  created_at: cu.createdAt.toISOString(),
  retired_at: cu.retiredAt?.toISOString() ?? null,
});

export const partyOut = (p: { id: string; name: string; metadata: Record<string, unknown>; createdAt: Date }) => ({
  id: p.id,
  name: p.name,
  metadata: p.metadata,
  created_at: p.createdAt.toISOString(),
});

/** A marketplace with its pricing currency (services/marketplace-pricing.ts withPricing). */
export const marketplaceOut = (m: {
  id: string;
  name: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
  pricingAsset: string | null;
  ratePolicy: "at_payout" | "at_earning";
}) => ({
  id: m.id,
  name: m.name,
  metadata: m.metadata,
  pricing_asset: m.pricingAsset,
  rate_policy: m.ratePolicy,
  created_at: m.createdAt.toISOString(),
});

export const InvitationOut = z
  .object({
    operator_id: z.string().openapi({ example: "op-datacenter-7" }),
    marketplace_id: z.string().openapi({ example: "gpu-market" }),
    status: z.enum(["invited", "accepted"]).openapi({ description: "invited: the marketplace may not post the operator's usage until the operator accepts" }),
    invited_at: Timestamp,
    accepted_at: Timestamp.nullable(),
  })
  .openapi("OperatorInvitation");

export const invitationOut = (i: { operatorId: string; marketplaceId: string; invitedAt: Date; acceptedAt: Date | null }) => ({
  operator_id: i.operatorId,
  marketplace_id: i.marketplaceId,
  status: i.acceptedAt === null ? ("invited" as const) : ("accepted" as const),
  invited_at: i.invitedAt.toISOString(),
  accepted_at: i.acceptedAt?.toISOString() ?? null,
});
