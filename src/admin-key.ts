import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Config } from "./config.js";

/**
 * The bootstrap admin key: ADMIN_API_KEY if set; otherwise the content of ADMIN_API_KEY_FILE,
 * which is created (mode 0600) with a random key on first start. The key itself is never logged.
 */
export function resolveAdminKey(config: Config): { key: string; source: string } {
  if (config.ADMIN_API_KEY) return { key: config.ADMIN_API_KEY, source: "ADMIN_API_KEY" };
  const file = config.ADMIN_API_KEY_FILE;
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `adm_${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
  }
  const key = readFileSync(file, "utf8").trim();
  if (key.length < 24) throw new Error(`${file} must hold a key of at least 24 characters`);
  return { key, source: file };
}
