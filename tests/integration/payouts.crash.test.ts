import { spawn } from "node:child_process";
import { join } from "node:path";
import { parseEther } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { PayoutVault } from "../../contracts/artifacts.js";
import { faultPoints, payoutIdToBytes32 } from "../../src/domain/payouts.js";
import { createPayout, getPayout } from "../../src/services/payouts.js";
import { verifyLedger } from "../../src/services/verify-ledger.js";
import { NEEDS_PG, onRealPostgres } from "../support/db.js";
import { NATIVE, payoutWorld, TOKEN, type PayoutWorld } from "../support/payout-world.js";
import { serviceProcessArgs } from "../support/service-build.js";

const root = join(import.meta.dirname, "..", "..");
let w: PayoutWorld | undefined;
let miner: NodeJS.Timeout | undefined;
afterEach(async () => {
  clearInterval(miner);
  await w?.close();
  w = undefined;
});

/** `npm run worker` as its own process, against the world's database and chain. */
function startWorker(world: PayoutWorld, extraEnv: Record<string, string> = {}) {
  const child = spawn(process.execPath, serviceProcessArgs("src/workers/main.ts"), {
    cwd: root,
    env: {
      ...process.env,
      ...world.db.env,
      ...world.env,
      CHAINS: world.chainsJson,
      PAYOUT_INTERVAL_MS: "100",
      LOG_LEVEL: "warn",
      HOLD_EXPIRY_INTERVAL_MS: "60000",
      JOURNAL_SEAL_INTERVAL_MS: "60000",
      ...extraEnv,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, output: () => output };
}

async function waitFor(cond: () => Promise<boolean>, ms: number, what: () => string): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting: ${what()}`);
}

/** What the database shows right after the kill: the worker died where it was meant to. */
async function expectStateAtKill(world: PayoutWorld, point: string): Promise<void> {
  const txs = await world.db.query<{ status: string; hash: string | null; broadcast_at: Date | null }>(
    `select c.status, a.hash, a.broadcast_at from chain_transactions c left join chain_tx_attempts a on a.chain_tx_id = c.id order by c.created_at`,
  );
  const statuses = (await world.db.query<{ status: string }>("select status from payouts order by id")).map((r) => r.status);
  switch (point) {
    case "after_batch":
      expect(txs.map((t) => t.status)).toEqual(["batched"]);
      expect(statuses).toContain("batched");
      break;
    case "after_sign":
      // Signed and stored, never sent.
      expect(txs[0]).toMatchObject({ status: "signed", broadcast_at: null });
      expect(await world.chain.public.getTransaction({ hash: txs[0]!.hash as `0x${string}` }).catch(() => null)).toBeNull();
      break;
    case "after_broadcast":
      // Sent, but the database does not know yet.
      expect(txs[0]).toMatchObject({ status: "signed", broadcast_at: null });
      expect(await world.chain.public.getTransaction({ hash: txs[0]!.hash as `0x${string}` })).toBeTruthy();
      break;
    case "before_settle":
      expect(statuses.every((s) => s !== "confirmed")).toBe(true);
      expect(txs.some((t) => t.status === "submitted")).toBe(true);
      break;
    case "after_settle":
      expect(statuses).toContain("confirmed");
      break;
  }
}

describe.skipIf(!onRealPostgres)(`the payout worker killed (SIGKILL) at each step, then restarted ${NEEDS_PG}`, () => {
  for (const point of faultPoints) {
    it(`killed ${point}: every payout ends confirmed, none paid twice, the ledger matches the chain`, async () => {
      w = await payoutWorld();
      const ops = [
        await w.operator(`k-${point}-1`, { [TOKEN]: 1_000_000n }),
        await w.operator(`k-${point}-2`, { [TOKEN]: 1_000_000n }),
        await w.operator(`k-${point}-3`, { [NATIVE]: parseEther("1") }),
      ];
      const wanted: Array<[number, string, bigint]> = [
        [0, TOKEN, 400_000n],
        [1, TOKEN, 1_000_000n],
        [2, NATIVE, parseEther("0.25")],
      ];
      const ids: string[] = [];
      for (const [i, asset, amount] of wanted) {
        const { payout } = await createPayout(w.db, w.settlements, {
          operatorId: ops[i]!.id,
          asset,
          amount,
          trigger: "request",
          requestedBy: "test",
          idempotencyKey: `crash-${point}-${i}`,
        });
        ids.push(payout.id);
      }
      const signerBefore = await w.chain.nativeBalance(w.chain.signer.address);
      const world = w;
      miner = setInterval(() => void world.chain.test.mine({ blocks: 1 }).catch(() => {}), 150);

      const doomed = startWorker(w, { FAULT_KILL_AT: point });
      const killed = await Promise.race([doomed.exited, new Promise<null>((r) => setTimeout(() => r(null), 45_000))]);
      expect(killed, `worker never reached ${point}: ${doomed.output()}`).not.toBeNull();
      expect(killed!.signal, doomed.output()).toBe("SIGKILL");
      await expectStateAtKill(w, point);

      const revived = startWorker(w);
      try {
        await waitFor(
          async () => {
            const ps = await Promise.all(ids.map((id) => getPayout(world.db, id)));
            return ps.every((p) => p!.status === "confirmed" || p!.status === "failed");
          },
          60_000,
          () => revived.output(),
        );
      } finally {
        revived.child.kill("SIGTERM");
        await revived.exited;
      }
      clearInterval(miner);

      const done = await Promise.all(ids.map(async (id) => (await getPayout(w!.db, id))!));
      expect(done.map((p) => p.status)).toEqual(["confirmed", "confirmed", "confirmed"]);
      expect(await w.chain.tokenBalance(ops[0]!.address)).toBe(400_000n);
      expect(await w.chain.tokenBalance(ops[1]!.address)).toBe(1_000_000n);
      expect(await w.chain.nativeBalance(ops[2]!.address)).toBe(parseEther("0.25"));
      for (const id of ids) {
        const logs = await w.chain.public.getContractEvents({
          address: w.chain.vault,
          abi: PayoutVault.abi,
          eventName: "Paid",
          args: { payoutId: payoutIdToBytes32(id) },
          fromBlock: 0n,
        });
        expect(logs, `Paid events of ${id}`).toHaveLength(1);
      }
      // Ledger = chain: what left the vault, and the gas the signer paid.
      expect((await w.balance("treasury:31337", TOKEN)).credits).toBe(1_400_000n);
      const spent = signerBefore - (await w.chain.nativeBalance(w.chain.signer.address));
      const native = await w.balance("treasury:31337", NATIVE);
      expect(native.credits).toBe(parseEther("0.25") + spent);
      expect((await w.balance("expense:gas:31337", NATIVE)).debits).toBe(spent);
      // Every nonce the database handed out was used on chain, once.
      const [{ n }] = (await w.db.query<{ n: string }>("select count(*)::text as n from chain_transactions where nonce is not null")) as [{ n: string }];
      expect(await w.chain.public.getTransactionCount({ address: w.chain.signer.address })).toBe(Number(n));
      const report = await verifyLedger(w.db);
      expect(report.ok, JSON.stringify(report)).toBe(true);
    });
  }
});
