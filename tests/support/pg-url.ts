/** The migrated template of one test run: named per run, so that two runs on one server do not collide. */
export const templateDbName = (pid: number) => `ledger_test_template_${pid}`;

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = "/" + name;
  return u.toString();
}
