/**
 * A process of its own that opens a database through a pooler whose server cannot be reached, runs
 * one query and reports what happened (tests/integration/pooler-server-down.test.ts). argv: the URL,
 * then `driver` (postgres.js as it is) or `service` (the service's openDatabase).
 */
import postgres from "postgres";
import { isDatabaseUnavailable, openDatabase } from "../../src/db/client.js";

const [url, mode] = process.argv.slice(2) as [string, "driver" | "service"];
const report = (e: unknown) => {
  const err = e as { code?: string; message?: string };
  console.log(JSON.stringify({ failed: true, code: err.code, message: err.message, unavailable: isDatabaseUnavailable(e) }));
};
if (mode === "service") {
  const db = await openDatabase({ url, pooler: "transaction", maxConnections: 1 });
  await db.query("select 1").then(() => console.log(JSON.stringify({ failed: false })), report);
  // Time for the driver's own promises to settle (an unhandled rejection would end the process here).
  await new Promise((r) => setTimeout(r, 300));
  await db.close();
} else {
  const sql = postgres(url, { max: 1, prepare: false, onnotice: () => {} });
  await sql.unsafe("select 1").then(() => console.log(JSON.stringify({ failed: false })), report);
  await new Promise((r) => setTimeout(r, 300));
  await sql.end({ timeout: 1 });
}
console.log(JSON.stringify({ exited: "normally" }));
