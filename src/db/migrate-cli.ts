import { loadConfig } from "../config.js";
import { openConfiguredDatabase } from "./open.js";

const config = loadConfig();
const db = await openConfiguredDatabase(config);
await db.close();
console.log(`migrations applied (${config.DATABASE_URL ? "PostgreSQL" : `PGlite at ${config.PGLITE_DATA_DIR}`})`);
