import { createRouter } from "../openapi";
import * as handlers from "./incidents.handlers";
import * as routes from "./incidents.routes";

// The fixed paths (distribution, summary, historical) come before /incidents/{incidentId}.
export const incidentsRouter = createRouter()
  .openapi(routes.listIncidents, handlers.listIncidents)
  .openapi(routes.incidentDistribution, handlers.incidentDistribution)
  .openapi(routes.incidentSummary, handlers.incidentSummary)
  .openapi(routes.startBackfill, handlers.startBackfill)
  .openapi(routes.getBackfill, handlers.getBackfill)
  .openapi(routes.getIncident, handlers.getIncident)
  .openapi(routes.updateIncident, handlers.updateIncident);
