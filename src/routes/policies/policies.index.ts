import { createRouter } from "../openapi";
import * as handlers from "./policies.handlers";
import * as routes from "./policies.routes";

export const policiesRouter = createRouter()
  .openapi(routes.getPolicies, handlers.getPolicies)
  .openapi(routes.putPolicies, handlers.putPolicies);
