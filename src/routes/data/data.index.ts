import { createRouter } from "../openapi";
import * as handlers from "./data.handlers";
import * as routes from "./data.routes";

export const dataRouter = createRouter()
  .openapi(routes.uploadBatch, handlers.uploadBatch)
  .openapi(routes.uploadDeprecatedSource, handlers.uploadDeprecatedSource)
  .openapi(routes.uploadDeprecatedV2Source, handlers.uploadDeprecatedV2Source)
  .openapi(routes.uploadDeprecatedTenant, handlers.uploadDeprecatedTenant)
  .openapi(routes.uploadDeprecatedV2Tenant, handlers.uploadDeprecatedV2Tenant)
  .openapi(routes.loadSchema, handlers.loadSchema);
