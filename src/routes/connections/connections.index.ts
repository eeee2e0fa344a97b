import { createRouter } from "../../lib/openapi";

export const connectionsRouter = createRouter();
