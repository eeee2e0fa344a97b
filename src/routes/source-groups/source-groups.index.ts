import { createRouter } from "../../lib/openapi";

export const sourceGroupsRouter = createRouter();
