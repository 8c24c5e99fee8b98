import { loadConfig } from "./config.js";
import { openConfiguredDatabase } from "./db/open.js";
import { verifyLedger } from "./services/verify-ledger.js";

/** `npm run verify`: checks the whole database; exits 1 naming each violation. */
const db = await openConfiguredDatabase(loadConfig());
try {
  const report = await verifyLedger(db);
  const c = report.counts;
  console.log(`checked ${c.assets} assets, ${c.accounts} accounts, ${c.transfers} transfers, ${c.entries} entries, ${c.seals} seals`);
  if (report.ok) console.log("ledger OK: every invariant holds");
  else {
    for (const v of report.violations) console.error(`VIOLATION ${v.check}: ${v.detail}`);
    process.exitCode = 1;
  }
} finally {
  await db.close();
}
