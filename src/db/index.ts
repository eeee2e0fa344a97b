import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

/** The drizzle database over the D1 binding; built once per request. */
export function createDb(d1: D1Database) {
  return drizzle(d1, { schema });
}

export type Db = ReturnType<typeof createDb>;
export { schema };
