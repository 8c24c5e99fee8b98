import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";

/**
 * The service compiled to JavaScript, for the tests and the chaos run, which start it as processes
 * of their own (the API, the workers, `npm run verify`). `node --import tsx` spends about two seconds of CPU per
 * process compiling and loading the TypeScript; the compiled service starts in half of that, and
 * the suite starts dozens. The tests' global setup (and the chaos run) compile it once (tsc, emit only: type-checking is
 * `npm run typecheck`'s) into `.test-dist-<hash of the sources>/`, a folder at the depth of `dist/`
 * (its relative paths, such as the migrations folder's, are those of the compiled service);
 * concurrent runs of the same sources share it, and a change of any source makes another.
 */
const root = join(import.meta.dirname, "..");

function sourcesHash(): string {
  const hash = createHash("sha256");
  const files = [
    ...readdirSync(join(root, "src"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts"))
      .map((f) => join("src", f)),
    "contracts/artifacts.ts",
    "tsconfig.json",
    "tsconfig.build.json",
  ].sort();
  for (const f of files)
    hash
      .update(f)
      .update("\0")
      .update(readFileSync(join(root, f)))
      .update("\0");
  return hash.digest("hex").slice(0, 16);
}

/** Compiles the service unless this version of its sources is compiled already; answers the folder. */
export function buildService(): string {
  const dir = join(root, `.test-dist-${sourcesHash()}`);
  if (existsSync(join(dir, "src", "main.js"))) return dir;
  const building = `${dir}.${process.pid}`;
  const tsc = spawnSync(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json", "--noCheck", "--outDir", building],
    {
      cwd: root,
      encoding: "utf8",
    },
  );
  if (tsc.status !== 0) throw new Error(`compiling the service for the tests failed:\n${tsc.stdout}${tsc.stderr}`);
  try {
    renameSync(building, dir);
  } catch (err) {
    // Another run compiled the same sources first: use its folder.
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(join(dir, "src", "main.js"))) throw err;
  }
  return dir;
}

/** The node arguments that start a compiled entry point of the service ("src/main.ts", "src/workers/main.ts", ...) from `dir`. */
export function compiledEntryArgs(dir: string, entry: string): string[] {
  return ["--enable-source-maps", join(dir, entry.replace(/\.ts$/, ".js"))];
}
