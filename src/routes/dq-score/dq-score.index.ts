import { createRouter } from "../openapi";
import * as handlers from "./dq-score.handlers";
import * as routes from "./dq-score.routes";

/** An asset's DQ score: its configuration (weights) and its history. */
export const dqScoreRouter = createRouter()
  .openapi(routes.getDqScoreConfig, handlers.getDqScoreConfig)
  .openapi(routes.putDqScoreConfig, handlers.putDqScoreConfig)
  .openapi(routes.deleteDqScoreConfig, handlers.deleteDqScoreConfig)
  .openapi(routes.dqScoreHistory, handlers.dqScoreHistory);
