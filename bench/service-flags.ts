import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The V8 flags `npm start` gives the service (its heap cap), read from package.json's start
 * script, so the benchmark runs the service as `npm start` does. `${HEAP_MB:-192}` takes HEAP_MB
 * from the environment as the shell would.
 */
export function startScriptNodeFlags(root: string): string[] {
  const scripts = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  const flags = scripts.start!.match(/--max-(?:old|semi)-space-size=\S+/g) ?? [];
  return flags.map((f) => f.replace(/\$\{(\w+):-([^}]*)\}/g, (_, name: string, def: string) => process.env[name] || def));
}
