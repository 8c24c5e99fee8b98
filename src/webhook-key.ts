import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Config } from "./config.js";

/**
 * The key that encrypts webhook signing secrets at rest (32 bytes): WEBHOOK_SECRETS_KEY (base64) if
 * set; otherwise the content of WEBHOOK_SECRETS_KEY_FILE, created (mode 0600) with a random key on
 * first start. Every API and worker process of one database must use the same key. Never logged.
 */
export function resolveWebhookKey(config: Pick<Config, "WEBHOOK_SECRETS_KEY" | "WEBHOOK_SECRETS_KEY_FILE">): Buffer {
  let text = config.WEBHOOK_SECRETS_KEY;
  if (text === undefined) {
    const file = config.WEBHOOK_SECRETS_KEY_FILE;
    if (!existsSync(file)) {
      mkdirSync(dirname(file), { recursive: true });
      try {
        writeFileSync(file, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
      } catch (e) {
        // Another process of the same deployment created it first: use theirs.
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
    }
    text = readFileSync(file, "utf8").trim();
  }
  const key = Buffer.from(text, "base64");
  if (key.length !== 32) throw new Error("the webhook secrets key must be 32 bytes in base64 (WEBHOOK_SECRETS_KEY or WEBHOOK_SECRETS_KEY_FILE)");
  return key;
}
