import { createRouter } from "../openapi";
import * as handlers from "./batch-data.handlers";
import * as routes from "./batch-data.routes";

export const batchDataRouter = createRouter()
  .openapi(routes.uploadBatch, handlers.uploadBatch)
  .openapi(routes.uploadDeprecatedSource, handlers.uploadDeprecatedSource)
  .openapi(routes.uploadDeprecatedV2Source, handlers.uploadDeprecatedV2Source)
  .openapi(routes.uploadDeprecatedTenant, handlers.uploadDeprecatedTenant)
  .openapi(routes.uploadDeprecatedV2Tenant, handlers.uploadDeprecatedV2Tenant);
