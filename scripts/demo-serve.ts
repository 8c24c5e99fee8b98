import type { DemoApi } from "./demo-parties.js";

/**
 * `npm run demo -- --serve`: after the demo, the service stays up with its data and the console's
 * address is printed with a key of each role to sign in with, until Ctrl-C (then the demo stops
 * everything it started, as without --serve).
 */
export async function serveConsole(origin: string, api: DemoApi, adminKey: string, say: (s: string) => void): Promise<void> {
  const key = async (name: string, role: "finance" | "marketplace" | "operator", scope_id?: string) =>
    api.ok(await api.admin.POST("/v1/api-keys", { params: { header: api.header() }, body: { name, role, ...(scope_id ? { scope_id } : {}) } })).secret!;
  const keys: [string, string][] = [
    ["admin", adminKey],
    ["finance", await key("console finance", "finance")],
    ["marketplace gpu-cloud", await key("console gpu-cloud", "marketplace", "gpu-cloud")],
    ["operator nordic-gpu", await key("console nordic-gpu", "operator", "nordic-gpu")],
  ];
  say(`\nThe console: ${origin}/console (sign in with one of these keys)`);
  for (const [who, secret] of keys) say(`  ${who.padEnd(22)} ${secret}`);
  say("The service keeps running with the demo's data; Ctrl-C stops it.");
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  say("\nstopping …");
}
