import { createRouter } from "../openapi";
import * as dqScore from "./dq-score.handlers";
import * as dqScoreRoutes from "./dq-score.routes";
import * as spark from "./spark.handlers";
import * as sparkRoutes from "./spark.routes";
import * as tickets from "./tickets.handlers";
import * as ticketRoutes from "./tickets.routes";

/** Tenant- and asset-level settings: Spark job configuration, ticket templates, DQ score weights. */
export const settingsRouter = createRouter()
  .openapi(sparkRoutes.getSparkJobConfig, spark.getSparkJobConfig)
  .openapi(sparkRoutes.putSparkJobConfig, spark.putSparkJobConfig)
  .openapi(sparkRoutes.deleteSparkJobConfig, spark.deleteSparkJobConfig)
  .openapi(ticketRoutes.createTicketTemplate, tickets.createTicketTemplate)
  .openapi(ticketRoutes.listTicketTemplates, tickets.listTicketTemplates)
  .openapi(ticketRoutes.getTicketTemplate, tickets.getTicketTemplate)
  .openapi(ticketRoutes.updateTicketTemplate, tickets.updateTicketTemplate)
  .openapi(dqScoreRoutes.getDqScoreConfig, dqScore.getDqScoreConfig)
  .openapi(dqScoreRoutes.putDqScoreConfig, dqScore.putDqScoreConfig)
  .openapi(dqScoreRoutes.deleteDqScoreConfig, dqScore.deleteDqScoreConfig);
