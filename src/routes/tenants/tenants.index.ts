import { createRouter } from "../openapi";
import * as handlers from "./tenants.handlers";
import * as routes from "./tenants.routes";

export const tenantsRouter = createRouter()
  .openapi(routes.listTenants, handlers.listTenants)
  .openapi(routes.getTenant, handlers.getTenant)
  .openapi(routes.putTenant, handlers.putTenant);
