import type { Access } from "./auth/access";
import type { Principal } from "./auth/principal";
import type { Db } from "./db";
import type { Env } from "./env";

/** Hono's environment: bindings and per-request variables. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    db: Db;
    /** Set by the authenticate middleware on authenticated routes. */
    principal: Principal;
    access: Access;
  };
};
