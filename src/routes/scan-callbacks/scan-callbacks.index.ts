import { createRouter } from "../openapi";
import * as handlers from "./scan-callbacks.handlers";
import * as routes from "./scan-callbacks.routes";

export const scanCallbacksRouter = createRouter().openapi(routes.postScanCallback, handlers.postScanCallback);
