/**
 * The layers of src/ (docs/architecture.md), checked by `npm run lint:deps` (in CI):
 *
 *   domain   pure rules and types: imports nothing else of src/
 *   db       SQL and the database handle: imports domain only
 *   chain    the EVM side (viem): imports domain only
 *   services use cases: domain, db, chain
 *   http     routes and the API's edge: services and domain (never db or workers)
 *   workers  background loops: services, db, chain, domain
 *   config (reads the environment; may use chain/'s settings parser), log, give-way: used by any
 *   layer, importing no layer above them
 */
const layer = (name) => `^src/${name}/`;
module.exports = {
  forbidden: [
    { name: "no-circular", severity: "error", from: {}, to: { circular: true } },
    {
      name: "domain-is-pure",
      severity: "error",
      comment: "domain/ holds rules and types only",
      from: { path: layer("domain") },
      to: { path: "^src/", pathNot: layer("domain") },
    },
    {
      name: "db-imports-domain-only",
      severity: "error",
      from: { path: layer("db") },
      to: { path: "^src/(services|http|workers|chain)/" },
    },
    {
      name: "chain-imports-domain-only",
      severity: "error",
      from: { path: layer("chain") },
      to: { path: "^src/(db|services|http|workers)/" },
    },
    {
      name: "services-below-http-and-workers",
      severity: "error",
      from: { path: layer("services") },
      to: { path: "^src/(http|workers)/" },
    },
    {
      name: "http-talks-to-services",
      severity: "error",
      comment: "routes reach the database through services/",
      from: { path: layer("http") },
      to: { path: "^src/(db|workers)/" },
    },
    {
      name: "workers-below-http",
      severity: "error",
      from: { path: layer("workers") },
      to: { path: layer("http") },
    },
    {
      name: "leaves-import-no-layer",
      severity: "error",
      comment: "config, log and give-way are used by every layer",
      from: { path: "^src/(config|log|give-way)\\.ts$" },
      to: { path: "^src/(db|services|http|workers)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    exclude: { path: "node_modules" },
  },
};
