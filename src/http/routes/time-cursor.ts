import { isUuid } from "../../domain/ids.js";
import { ApiError } from "../problem.js";

/**
 * The cursor of a list ordered by a time and an id (rates by observation, conversions by when they
 * were booked): the last row's time and id, opaque to clients. `kind` keeps one list's cursor from
 * being taken by another.
 */
export function encodeTimeCursor(kind: string, at: Date | string, id: string): string {
  return Buffer.from(`${kind}:${new Date(at).toISOString()}/${id}`).toString("base64url");
}

/** The time and id a cursor of this kind stands for; 400 when it is not one this API returned. */
export function decodeTimeCursor(kind: string, cursor: string | undefined): { at: Date; id: string } | undefined {
  if (cursor === undefined) return undefined;
  const m = /^([a-z]+):(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\/(.+)$/.exec(Buffer.from(cursor, "base64url").toString());
  const at = m ? new Date(m[2]!) : undefined;
  if (!m || m[1] !== kind || !at || Number.isNaN(at.getTime()) || !isUuid(m[3])) {
    throw new ApiError("invalid_request", "cursor is not one this API returned", [{ path: "cursor", message: "invalid" }]);
  }
  return { at, id: m[3]! };
}
