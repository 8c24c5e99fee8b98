import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * PGlite serves one process: two processes opening the same data folder would corrupt it. The
 * folder is claimed with a pid file; a claim by a live process refuses the second opener with a
 * clear message, and a claim left by a dead process is taken over.
 */
export function claimDataDir(dir: string): () => void {
  const file = join(dir, "ledger.pid");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = Number(readFileSync(file, "utf8").trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new Error(
          `the embedded database in ${dir} is in use by process ${holder}: stop it first, or point both at a PostgreSQL server with DATABASE_URL`,
        );
      }
      rmSync(file, { force: true }); // left by a process that is gone
    }
  }
  throw new Error(`could not claim the embedded database in ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
