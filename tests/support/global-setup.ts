import postgres from "postgres";
import { openDatabase } from "../../src/db/client.js";
import { runMigrations } from "../../src/db/migrate.js";
import { TEMPLATE_DB, withDatabase } from "./pg-url.js";

/**
 * With TEST_DATABASE_URL, builds the migrated template database once per run; each test file then
 * gets its own copy (CREATE DATABASE ... TEMPLATE), so files run isolated and in parallel.
 */
export async function setup(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    console.log("\nTEST_DATABASE_URL is not set: tests run on embedded PGlite; tests that need several connections are skipped.\n");
    return;
  }
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists ${TEMPLATE_DB} with (force)`);
    await admin.unsafe(`create database ${TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  const db = await openDatabase({ url: withDatabase(url, TEMPLATE_DB), maxConnections: 1 });
  try {
    await runMigrations(db);
  } finally {
    await db.close();
  }
}
