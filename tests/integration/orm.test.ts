import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "../../src/db/client.js";
import { orm, run } from "../../src/db/orm.js";
import { marketplaces } from "../../src/db/schema/index.js";
import { freshDatabase, type TestDatabase } from "../support/db.js";

/**
 * drizzle's query builder runs through the project's handles, in their transactions, on both
 * databases; its errors keep the driver's SQLSTATE (by which the service tells an outage from a
 * bug and retries deadlocks) and do not carry the statement's parameters.
 */
describe("the query builder (src/db/orm.ts)", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(async () => {
    await db.destroy();
  });

  it("reads and writes in the caller's transaction, and a rollback takes its writes back", async () => {
    await expect(
      db.transaction(async (tx) => {
        await run(orm(tx).insert(marketplaces).values({ id: "orm-m", name: "Rolled back" }));
        expect(await run(orm(tx).select({ name: marketplaces.name }).from(marketplaces).where(eq(marketplaces.id, "orm-m")))).toEqual([
          { name: "Rolled back" },
        ]);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await run(orm(db).select().from(marketplaces).where(eq(marketplaces.id, "orm-m")))).toEqual([]);
  });

  it("a refused statement throws the driver's error with its SQLSTATE, without the parameters", async () => {
    await run(orm(db).insert(marketplaces).values({ id: "orm-dup", name: "secret-looking-name" }));
    const err = await run(orm(db).insert(marketplaces).values({ id: "orm-dup", name: "secret-looking-name" })).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("23505");
    expect(String((err as Error).message)).not.toContain("secret-looking-name");
    expect(isDatabaseUnavailable(err)).toBe(false);
  });
});
