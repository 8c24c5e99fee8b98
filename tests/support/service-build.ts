import { inject } from "vitest";
import { compiledEntryArgs } from "../../scripts/compiled-service.js";

export { buildService } from "../../scripts/compiled-service.js";

/** The node arguments that start a compiled entry point of the service (scripts/compiled-service.ts), built by the global setup. */
export function serviceProcessArgs(entry: `src/${string}.ts`): string[] {
  return compiledEntryArgs(inject("serviceDist"), entry);
}

declare module "vitest" {
  export interface ProvidedContext {
    serviceDist: string;
  }
}
