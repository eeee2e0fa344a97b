import { createRouter } from "../openapi";
import * as handlers from "./assets.handlers";
import * as routes from "./assets.routes";

export const assetsRouter = createRouter()
  .openapi(routes.createAsset, handlers.createAsset)
  .openapi(routes.listAllAssets, handlers.listAllAssets)
  .openapi(routes.moveAssets, handlers.moveAssets)
  .openapi(routes.listProjectAssets, handlers.listProjectAssets)
  .openapi(routes.getAsset, handlers.getAsset)
  .openapi(routes.updateAsset, handlers.updateAsset)
  .openapi(routes.deleteAsset, handlers.deleteAsset)
  .openapi(routes.setAssetLineage, handlers.setAssetLineage)
  .openapi(routes.loadSchema, handlers.loadSchema);
