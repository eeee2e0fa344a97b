import { createRouter } from "../openapi";
import * as handlers from "./metrics.handlers";
import * as routes from "./metrics.routes";

/** An asset's metric history: which metrics it has, and one metric's points with their bands and alerts. */
export const metricsRouter = createRouter()
  .openapi(routes.listMetrics, handlers.listMetrics)
  .openapi(routes.metricHistory, handlers.metricHistory);
