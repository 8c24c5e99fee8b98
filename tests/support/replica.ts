import postgres from "postgres";

/** Waits until a database created on the primary has reached its streaming replica (at most 30 s). */
export async function arrivedOnReplica(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 2 });
    try {
      await sql`select 1`;
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await sql.end({ timeout: 1 });
    }
  }
  throw new Error(`${url} did not reach the replica within 30 s`);
}
