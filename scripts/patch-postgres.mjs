/**
 * Run after `npm install` / `npm ci` (the `postinstall` script): a fix to the PostgreSQL driver
 * (postgres.js 3.4.x). When a connection closes, the driver may still flush a buffered write on
 * it from a `setImmediate`; `socket` is null by then and the TypeError it throws cannot be caught,
 * so it ends the whole process (porsager/postgres issues 1066, 1154, 1208; seen here when
 * PostgreSQL restarts under load). The fix, as proposed upstream (pull request 1209): when the
 * socket is gone, fail the connection's queries with CONNECTION_CLOSED (the service answers 503
 * and the pool reconnects) instead of writing. It returns true ("written"): false would make the
 * pool park the connection in its `full` queue, which a closed connection never leaves, losing a
 * pool slot; the closed connection is already back in the pool's `closed` queue by then.
 * Idempotent; does nothing to a driver that already guards the write; fails the install if the
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
      return true
    }
    const x = socket.write(chunk, fn)`;

let changed = 0;
let found = 0;
for (const variant of ["src", "cjs/src", "cf/src"]) {
  const file = join(root, "node_modules", "postgres", variant, "connection.js");
  if (!existsSync(file)) continue;
  found++;
  const text = readFileSync(file, "utf8");
  if (text.includes(marker)) {
    // An earlier version of this fix answered false; bring it up to date.
    if (text.includes(`${marker}\n    if (!socket) {\n      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options, socket))\n      return false`)) {
      writeFileSync(file, text.replace("error(Errors.connection('CONNECTION_CLOSED', options, socket))\n      return false", "error(Errors.connection('CONNECTION_CLOSED', options, socket))\n      return true"));
      changed++;
    }
    continue;
  }
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
