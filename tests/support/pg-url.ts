export const TEMPLATE_DB = "ledger_test_template";

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = "/" + name;
  return u.toString();
}
