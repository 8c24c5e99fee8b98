import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Secrets the service must read back (webhook signing secrets) are stored encrypted with
 * AES-256-GCM under a key that never enters the database (WEBHOOK_SECRETS_KEY). The row's id is the
 * additional authenticated data: a ciphertext copied onto another row does not open there.
 * Format: `v1.<iv>.<ciphertext>.<tag>`, each part base64url.
 */
export function sealSecret(key: Buffer, plaintext: string, boundTo: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(boundTo));
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return ["v1", iv, ct, cipher.getAuthTag()].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
}

/** The plaintext of sealSecret's output; throws when the key or the row is not the one it was sealed with. */
export function openSecret(key: Buffer, sealed: string, boundTo: string): string {
  const [version, iv, ct, tag] = sealed.split(".");
  if (version !== "v1" || !iv || ct === undefined || !tag) throw new Error("not a sealed secret");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(boundTo));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
}

/** A new Standard Webhooks signing secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}
