import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import type { TestProject } from "vitest/node";
import { openDatabase } from "../../src/db/client.js";
import { runMigrations } from "../../src/db/migrate.js";
import { templateDbName, withDatabase } from "./pg-url.js";
import { buildService } from "./service-build.js";

/**
 * With TEST_DATABASE_URL, builds the migrated template database once per run; each test file then
 * gets its own copy (CREATE DATABASE ... TEMPLATE), so files run isolated and in parallel.
 */
export async function setup({ provide }: TestProject): Promise<void | (() => Promise<void>)> {
  provide("serviceDist", buildService());
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    console.log("\nTEST_DATABASE_URL is not set: tests run on embedded PGlite; tests that need several connections are skipped.\n");
    const template = await pgliteTemplate();
    provide("pgliteTemplate", template);
    return async () => rmSync(template, { force: true });
  }
  const TEMPLATE_DB = templateDbName(process.pid);
  provide("pgTemplate", TEMPLATE_DB);
  const admin = postgres(url, { max: 1, prepare: false, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists ${TEMPLATE_DB} with (force)`);
    await admin.unsafe(`create database ${TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  const pooler = process.env.DATABASE_POOLER === "transaction" ? "transaction" : "none";
  const db = await openDatabase({ url: withDatabase(url, TEMPLATE_DB), maxConnections: 1, pooler });
  try {
    await runMigrations(db);
  } finally {
    await db.close();
  }
  await releaseTemplate(url, TEMPLATE_DB);
  return async () => {
    const admin = postgres(url, { max: 1, prepare: false, onnotice: () => {} });
    try {
      await admin.unsafe(`drop database if exists ${TEMPLATE_DB} with (force)`);
    } finally {
      await admin.end();
    }
  };
}

/**
 * CREATE DATABASE ... TEMPLATE needs the template free of connections. A pooler keeps the server
 * connection the migrations used open after the client has gone; end it (nothing to do when the
 * tests connect directly).
 */
async function releaseTemplate(url: string, template: string): Promise<void> {
  const admin = postgres(url, { max: 1, prepare: false, onnotice: () => {} });
  try {
    await admin.unsafe("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [template]);
  } finally {
    await admin.end();
  }
}

/**
 * PGlite's initdb takes seconds; loading a dumped data folder takes under one. The migrated
 * database is dumped once per run and every test database starts from that file.
 */
async function pgliteTemplate(): Promise<string> {
  const db = await openDatabase({ dataDir: "memory://" });
  try {
    await runMigrations(db);
    if (db.driver.kind !== "pglite") throw new Error("expected PGlite");
    const dump = await db.driver.pg.dumpDataDir("none");
    const file = join(tmpdir(), `ledger-pglite-template-${process.pid}.tar`);
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    return file;
  } finally {
    await db.close();
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    pgliteTemplate: string;
    pgTemplate: string;
  }
}
