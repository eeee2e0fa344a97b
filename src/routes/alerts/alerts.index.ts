import { createRouter } from "../openapi";
import * as handlers from "./alerts.handlers";
import * as routes from "./alerts.routes";

/** The alerts of a scan job, and of an incident (by ids). */
export const alertsRouter = createRouter()
  .openapi(routes.scanAlerts, handlers.scanAlerts)
  .openapi(routes.alertsByFilters, handlers.alertsByFilters);
