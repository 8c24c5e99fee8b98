import type { Context } from "hono";
import type { Principal } from "../../domain/access.js";
import type { AppEnv } from "../request-context.js";
import type { ApiFetch, ConsoleApi } from "./api.js";
import type { Page } from "./layout.js";
import type { Session, SessionStore } from "./session.js";

/** What the console's routes and forms share (made once per app in routes.ts). */

/** Who the session's key is now (a revoked key ends the session), and the API to call with it. */
export interface Signed {
  session: Session;
  principal: Principal;
  api: ConsoleApi;
}

export interface ConsoleKit {
  sessions: SessionStore;
  fetch: ApiFetch;
  now: () => Date;
  signedIn(c: Context<AppEnv>): Promise<Signed | null>;
  html(c: Context<AppEnv>, page: Page, signed: Signed | null): Response;
}
