import { createRouter } from "../../lib/openapi";

export const settingsRouter = createRouter();
