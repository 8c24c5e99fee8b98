/** Where a test may stop the payout worker dead (FAULT_KILL_AT), one point per step of the payout lifecycle. */
export const faultPoints = ["after_batch", "after_sign", "after_broadcast", "before_settle", "after_settle"] as const;
export type FaultPoint = (typeof faultPoints)[number];
