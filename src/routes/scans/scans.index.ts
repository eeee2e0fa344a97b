import { createRouter } from "../openapi";
import * as handlers from "./scans.handlers";
import * as routes from "./scans.routes";

export const scansRouter = createRouter()
  .openapi(routes.triggerScan, handlers.triggerScan)
  .openapi(routes.listScans, handlers.listScans)
  .openapi(routes.getScan, handlers.getScan)
  .openapi(routes.cancelScan, handlers.cancelScan);
