import type { Queryable } from "../db/client.js";
import { getAssetsByCodes } from "../db/queries/assets.js";
import type { Settlements } from "../chain/settlement.js";
import { describeSettlement } from "../domain/assets.js";

/**
 * The chain settings against the assets already in the database: an asset is identified by its
 * chain and its token (or the chain's native token), and each code the settings give must name
 * that asset, not another one. Otherwise a payout would be paid on chain and then fail to settle
 * in the ledger (its gas, say, booked to another chain's asset): the service refuses to start.
 * One case is only a warning (settingsDrift): the settings name a token for an asset that the
 * database has as another token (or on another chain, or off-chain), as after a redeployment of the
 * token. No gas is booked in such an asset, and the database's settlement applies (payouts on a
 * chain whose settings name another token are refused: chain_not_configured) until it is changed
 * by an approved proposal (PATCH /v1/assets/{code}) or the settings are corrected; the process
 * must run for the first.
 * Returns one message per conflict.
 */
export async function settingsConflicts(db: Queryable, settlements: Settlements): Promise<string[]> {
  return (await compare(db, settlements)).filter((c) => !c.drift).map((c) => c.message);
}

/** The assets that the settings name as a token the database does not have for them, one message each (see settingsConflicts). */
export async function settingsDrift(db: Queryable, settlements: Settlements): Promise<string[]> {
  return (await compare(db, settlements)).filter((c) => c.drift).map((c) => c.message);
}

async function compare(db: Queryable, settlements: Settlements): Promise<{ message: string; drift: boolean }[]> {
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
  const problems: { message: string; drift: boolean }[] = [];
  for (const c of claims) {
    const a = byCode.get(c.code);
    if (!a) continue;
    const s = a.settlement;
    const sameChain = s.kind !== "offchain" && BigInt(s.chainId) === c.chain.chainId;
    const same = sameChain && (c.token === null ? s.kind === "native" : s.kind === "erc20" && s.tokenAddress.toLowerCase() === c.token);
    if (same) continue;
    const names = `chain ${c.chain.settings.name} (${c.chain.chainId}) names ${c.token === null ? "its native token" : `token ${c.token}`} ${c.code}`;
    if (s.kind !== "native" && c.token !== null) {
      problems.push({
        drift: true,
        message: `${names}, but asset ${c.code} in the database settles as ${describeSettlement(s)}: the database's settlement applies (payouts on a chain whose settings name another token are refused) until an admin proposes this token (PATCH /v1/assets/${c.code}) and another key approves it, or the chain settings are corrected`,
      });
      continue;
    }
    problems.push({
      drift: false,
      message: `${names}, but asset ${c.code} in the database is ${s.kind === "offchain" ? "settled off-chain" : describeSettlement(s)}: give it another code in the chain settings`,
    });
  }
  return problems;
}

/** At start: a process whose chain settings contradict the database's assets does not run. */
export async function exitOnSettingsConflicts(db: Queryable & { close(): Promise<void> }, settlements: Settlements): Promise<void> {
  for (const warning of await settingsDrift(db, settlements)) console.warn(`Warning: ${warning}`);
  const problems = await settingsConflicts(db, settlements);
  if (problems.length === 0) return;
  console.error(`Invalid configuration: the chain settings contradict the assets in the database:\n  ${problems.join("\n  ")}`);
  await db.close();
  process.exit(1);
}
