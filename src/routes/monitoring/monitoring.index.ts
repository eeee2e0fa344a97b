import { createRouter } from "../openapi";
import * as handlers from "./monitoring.handlers";
import * as routes from "./monitoring.routes";

export const monitoringRouter = createRouter()
  .openapi(routes.getPolicies, handlers.getPolicies)
  .openapi(routes.putPolicies, handlers.putPolicies)
  .openapi(routes.dqScoreHistory, handlers.dqScoreHistory);
