import { createRouter } from "../openapi";
import * as handlers from "./spark-job-config.handlers";
import * as routes from "./spark-job-config.routes";

export const sparkJobConfigRouter = createRouter()
  .openapi(routes.getSparkJobConfig, handlers.getSparkJobConfig)
  .openapi(routes.putSparkJobConfig, handlers.putSparkJobConfig)
  .openapi(routes.deleteSparkJobConfig, handlers.deleteSparkJobConfig);
