import { createRouter } from "../openapi";
import * as handlers from "./api-keys.handlers";
import * as routes from "./api-keys.routes";

// User-scoped routes come before /auth/{tenant}/… so a static segment always wins.
export const apiKeysRouter = createRouter()
  .openapi(routes.listUserKeys, handlers.listUserKeys)
  .openapi(routes.createUserKey, handlers.createUserKey)
  .openapi(routes.getUserKey, handlers.getUserKey)
  .openapi(routes.deleteUserKey, handlers.deleteUserKey)
  .openapi(routes.listTenantKeys, handlers.listTenantKeys)
  .openapi(routes.createTenantKey, handlers.createTenantKey)
  .openapi(routes.getTenantKey, handlers.getTenantKey)
  .openapi(routes.deleteTenantKey, handlers.deleteTenantKey);
