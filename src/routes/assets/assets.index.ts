import { createRouter } from "../../lib/openapi";

export const assetsRouter = createRouter();
