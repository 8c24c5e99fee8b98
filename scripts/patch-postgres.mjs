/**
 * Run after `npm install` / `npm ci` (the `postinstall` script): a fix to the PostgreSQL driver
 * (postgres.js 3.4.x). When a connection closes, the driver may still flush a buffered write on
 * it from a `setImmediate`; `socket` is null by then and the TypeError it throws cannot be caught,
 * so it ends the whole process (porsager/postgres issues 1066, 1154, 1208; seen here when
 * PostgreSQL restarts under load). The fix, as proposed upstream (pull request 1209): when the
 * socket is gone, fail the connection's queries with CONNECTION_CLOSED (the service answers 503
 * and the pool reconnects) instead of writing, and report the write as not done. (Reporting it
 * as done was tried: the pool then kept routing queries to the closed connection, and under a
 * database crash a request once got a wrong answer; see docs/reliability.md.) Idempotent; does nothing to a driver that already guards the write; fails the install if the
 * driver is missing or its code is not what it expects.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const marker = "/* settlement-ledger: guard against a closed socket */";
const original = "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)";
const patched = `  function nextWrite(fn) {
    ${marker}
    if (!socket) {
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options, socket))
      return false
    }
    const x = socket.write(chunk, fn)`;

let changed = 0;
let found = 0;
for (const variant of ["src", "cjs/src", "cf/src"]) {
  const file = join(root, "node_modules", "postgres", variant, "connection.js");
  if (!existsSync(file)) continue;
  found++;
  const text = readFileSync(file, "utf8");
  if (text.includes(marker)) continue;
  if (/function nextWrite\(fn\) \{\s*if \(!socket\)/.test(text)) continue;
  if (!text.includes(original)) {
    console.error(`patch-postgres: ${file} does not contain the expected nextWrite; check whether this postgres.js version still needs the fix`);
    process.exit(1);
  }
  writeFileSync(file, text.replace(original, patched));
  changed++;
}
if (found === 0) {
  console.error("patch-postgres: node_modules/postgres/src/connection.js not found; is the postgres package installed at the top level?");
  process.exit(1);
}
if (changed > 0) console.log(`patch-postgres: guarded nextWrite against a closed socket in ${changed} file(s)`);
