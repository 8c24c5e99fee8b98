import type { Queryable } from "../db/client.js";
import { getAssetsByCodes } from "../db/queries/assets.js";
import type { Settlements } from "../chain/settlement.js";

/**
 * The chain settings against the assets already in the database: an asset is identified by its
 * chain and its token (or the chain's native token), and each code the settings give must name
 * that asset, not another one. Otherwise a payout would be paid on chain and then fail to settle
 * in the ledger (its gas, say, booked to another chain's asset): the service refuses to start.
 * Returns one message per conflict.
 */
export async function settingsConflicts(db: Queryable, settlements: Settlements): Promise<string[]> {
  const claims = settlements.chains.flatMap((c) => [
    { chain: c, code: c.settings.native_asset.code, token: null as string | null },
    ...(c.settings.assets ?? []).map((a) => ({ chain: c, code: a.code, token: a.token?.toLowerCase() ?? null })),
  ]);
  if (claims.length === 0) return [];
  const assets = await getAssetsByCodes(
    db,
    claims.map((c) => c.code),
  );
  const byCode = new Map(assets.map((a) => [a.code, a]));
  const problems: string[] = [];
  for (const c of claims) {
    const a = byCode.get(c.code);
    if (!a) continue;
    const s = a.settlement;
    const same =
      s.kind !== "offchain" &&
      BigInt(s.chainId) === c.chain.chainId &&
      (c.token === null ? s.kind === "native" : s.kind === "erc20" && s.tokenAddress.toLowerCase() === c.token);
    if (!same) {
      const is =
        s.kind === "offchain"
          ? "settled off-chain"
          : s.kind === "native"
            ? `the native token of chain ${s.chainId}`
            : `token ${s.tokenAddress.toLowerCase()} on chain ${s.chainId}`;
      problems.push(
        `chain ${c.chain.settings.name} (${c.chain.chainId}) names ${c.token === null ? "its native token" : `token ${c.token}`} ${c.code}, but asset ${c.code} in the database is ${is}: give it another code in the chain settings`,
      );
    }
  }
  return problems;
}

/** At start: a process whose chain settings contradict the database's assets does not run. */
export async function exitOnSettingsConflicts(db: Queryable & { close(): Promise<void> }, settlements: Settlements): Promise<void> {
  const problems = await settingsConflicts(db, settlements);
  if (problems.length === 0) return;
  console.error(`Invalid configuration: the chain settings contradict the assets in the database:\n  ${problems.join("\n  ")}`);
  await db.close();
  process.exit(1);
}
