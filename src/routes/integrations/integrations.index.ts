import { createRouter } from "../openapi";
import * as handlers from "./integrations.handlers";
import * as routes from "./integrations.routes";

/** The Jira integration and the tickets of incidents. */
export const integrationsRouter = createRouter()
  .openapi(routes.putJiraIntegration, handlers.putJiraIntegration)
  .openapi(routes.getJiraIntegration, handlers.getJiraIntegration)
  .openapi(routes.deleteJiraIntegration, handlers.deleteJiraIntegration)
  .openapi(routes.createTicket, handlers.createTicket)
  .openapi(routes.listTickets, handlers.listTickets);
