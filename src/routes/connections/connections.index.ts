import { createRouter } from "../openapi";
import * as handlers from "./connections.handlers";
import * as routes from "./connections.routes";

export const connectionsRouter = createRouter()
  .openapi(routes.createProjectConnection, handlers.createProjectConnection)
  .openapi(routes.createGlobalConnection, handlers.createGlobalConnection)
  .openapi(routes.updateProjectConnection, handlers.updateProjectConnection)
  .openapi(routes.updateConnection, handlers.updateConnection)
  .openapi(routes.listProjectConnections, handlers.listProjectConnections)
  .openapi(routes.listConnections, handlers.listConnections)
  .openapi(routes.getProjectConnection, handlers.getProjectConnection)
  .openapi(routes.getConnection, handlers.getConnection);
