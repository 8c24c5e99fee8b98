/**
 * A guard against one failure of the PostgreSQL driver (postgres.js 3.4) that would otherwise end
 * the process.
 *
 * On every new connection the driver reads the array types (`select b.oid, b.typarray from
 * pg_catalog.pg_type …`) before it runs the query that opened the connection, and it leaves that
 * read's promise unhandled. When the read fails, the rejection is unhandled, and Node.js ends the
 * process. A direct server refuses a login before this point, so this is rare without a pooler. A
 * pooler in transaction mode is different: PgBouncer accepts the client's login without a server
 * connection, and only finds out at the first statement that the server cannot be reached. It then
 * answers `08P01 server login has been failing, try again later (server_login_retry)`. This happens
 * whenever PostgreSQL restarts behind PgBouncer (the driver's issue 1086).
 *
 * The failed read is harmless to the driver. The connection closes and is opened again, and the
 * driver reads the types again on the new one (`needsTypes` is reset at every connect). The query
 * that opened the connection is sent again or rejected to its own caller. Nothing else hangs on
 * this promise. The guard therefore drops exactly this rejection, identified by the statement
 * the driver attaches to its errors, and logs a warning. Every other unhandled rejection behaves
 * as before: when no other listener exists, the process ends as it would by default.
 */

const TYPE_READ_MARKERS = ["pg_catalog.pg_type", "typcategory = 'A'"];

/** Whether an error is the driver's array-type read failing (the rejection nobody can handle). */
export function isDriverTypeReadFailure(reason: unknown): boolean {
  if (reason === null || typeof reason !== "object") return false;
  const statement = (reason as { query?: unknown }).query;
  return typeof statement === "string" && TYPE_READ_MARKERS.every((m) => statement.includes(m));
}

let installed = false;

/**
 * Installs the guard once per process (idempotent). `warn` receives the dropped error's code and
 * message (never parameters: the type read has none).
 */
export function guardDriverTypeReads(warn: (message: string) => void = defaultWarn): void {
  if (installed) return;
  installed = true;
  process.on("unhandledRejection", function guard(reason) {
    if (isDriverTypeReadFailure(reason)) {
      const e = reason as { code?: string; message?: string };
      warn(`database driver: a new connection's type read failed (${e.code ?? "no code"}: ${e.message ?? ""}); the connection is opened again`);
      return;
    }
    // The only listener: keep Node.js's default (the process ends on an unhandled rejection).
    if (process.listeners("unhandledRejection").every((l) => l === guard)) throw reason;
  });
}

function defaultWarn(message: string): void {
  process.stderr.write(`${JSON.stringify({ level: 40, time: new Date().toISOString(), service: "settlement-ledger", msg: message })}\n`);
}
