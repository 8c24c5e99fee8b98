import { z } from "@hono/zod-openapi";
import { unitHours, type CapacityVersion } from "../../domain/capacity.js";
import { availableUnitMs, groupWindow, netPerAvailableUnitHour, paidUnitMs, utilisation } from "../../domain/economics.js";
import { displayOrNull } from "../display.js";

/** The fields of an earnings row that compare what was sold with what could have been (docs/usage.md, "Utilisation"). */
export const EconomicsFields = {
  resource: z
    .string()
    .nullable()
    .openapi({ description: "the resource (machine class) of the row, when rows are per resource (group_by=resource or by_resource=true)" }),
  available_unit_hours: z.string().nullable().openapi({
    description:
      "unit-hours the operator's declared capacity of the resource held in the group's time (up to now), 6 decimals rounded down; null when the row is not per resource or nothing is declared",
    example: "5376",
  }),
  utilisation: z.string().nullable().openapi({ description: "paid_hours / available_unit_hours, 6 decimals rounded down (0.25 = 25%)", example: "0.25" }),
  net_per_available_unit_hour: z.string().nullable().openapi({
    description: "net / available_unit_hours in the asset's display units, rounded down: effective_rate_per_hour × utilisation",
    example: "0.75",
  }),
  net_per_available_unit_hour_units: z.string().nullable().openapi({ description: "net_per_available_unit_hour in the asset's smallest units" }),
};

export const ECONOMICS_COLUMNS = [
  "resource",
  "available_unit_hours",
  "utilisation",
  "net_per_available_unit_hour",
  "net_per_available_unit_hour_units",
] as const;

type Economics = { [K in keyof typeof EconomicsFields]: z.infer<(typeof EconomicsFields)[K]> };

/** The economics of one earnings row: its group's window, the capacity of its resource over it, and what the row's paid hours and net make of it. */
export function economicsOf(
  row: { group_key: string; resource: string | null; unit: string; quantity: string; net: string; scale: number },
  capacity: Map<string, CapacityVersion[]>,
  q: { groupBy: string; from: Date; to: Date; now: Date },
): Economics {
  const empty = {
    resource: row.resource,
    available_unit_hours: null,
    utilisation: null,
    net_per_available_unit_hour: null,
    net_per_available_unit_hour_units: null,
  };
  if (row.resource === null) return empty;
  const available = availableUnitMs(capacity.get(row.resource), groupWindow(q.groupBy, row.group_key, q.from, q.to, q.now));
  if (available === null) return empty;
  const paid = paidUnitMs(row.quantity, row.unit);
  const perAvailable = netPerAvailableUnitHour(BigInt(row.net), available);
  return {
    resource: row.resource,
    available_unit_hours: unitHours(available),
    utilisation: paid ? utilisation(paid, available) : null,
    net_per_available_unit_hour: displayOrNull(perAvailable, row.scale),
    net_per_available_unit_hour_units: perAvailable?.toString() ?? null,
  };
}
