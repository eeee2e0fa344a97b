import { createRouter } from "../openapi";
import * as handlers from "./jira.handlers";
import * as routes from "./jira.routes";

/** The tenant's Jira integration. */
export const jiraRouter = createRouter()
  .openapi(routes.putJiraIntegration, handlers.putJiraIntegration)
  .openapi(routes.getJiraIntegration, handlers.getJiraIntegration)
  .openapi(routes.deleteJiraIntegration, handlers.deleteJiraIntegration);
