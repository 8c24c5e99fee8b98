/**
 * The benchmarks' database: a fresh one on the PostgreSQL of DATABASE_URL (default: the local
 * server), which must commit durably (fsync and synchronous_commit on), or the run stops.
 */
import postgres from "postgres";

export interface BenchDatabase {
  /** The new database's URL. */
  url: string;
  settings: { fsync: string; sync: string; version: string };
}

export async function freshBenchDatabase(name: string): Promise<BenchDatabase> {
  const serverUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const url = (() => {
    const u = new URL(serverUrl);
    u.pathname = `/${name}`;
    return u.toString();
  })();
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    const [settings] = await admin<
      { fsync: string; sync: string; version: string }[]
    >`select current_setting('fsync') as fsync, current_setting('synchronous_commit') as sync, version() as version`;
    if (settings!.fsync !== "on" || settings!.sync !== "on") {
      console.error(`durable commits required: fsync=${settings!.fsync} synchronous_commit=${settings!.sync}`);
      process.exit(1);
    }
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.unsafe(`create database ${name}`);
    return { url, settings: settings! };
  } finally {
    await admin.end();
  }
}
