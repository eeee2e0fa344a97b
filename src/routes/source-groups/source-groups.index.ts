import { createRouter } from "../openapi";
import * as handlers from "./source-groups.handlers";
import * as routes from "./source-groups.routes";

export const sourceGroupsRouter = createRouter()
  .openapi(routes.createSourceGroup, handlers.createSourceGroup)
  .openapi(routes.moveSourceGroups, handlers.moveSourceGroups)
  .openapi(routes.updateSourceGroup, handlers.updateSourceGroup)
  .openapi(routes.listProjectSourceGroups, handlers.listProjectSourceGroups)
  .openapi(routes.listAllSourceGroups, handlers.listAllSourceGroups)
  .openapi(routes.deleteSourceGroup, handlers.deleteSourceGroup)
  .openapi(routes.listSourceGroupAssetNames, handlers.listSourceGroupAssetNames);
