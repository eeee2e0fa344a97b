import { createRouter } from "../openapi";
import * as handlers from "./notification-channels.handlers";
import * as routes from "./notification-channels.routes";

/** The tenant's notification channels, their test event and delivery logs. */
export const notificationChannelsRouter = createRouter()
  .openapi(routes.createChannel, handlers.createChannel)
  .openapi(routes.listChannels, handlers.listChannels)
  .openapi(routes.getChannel, handlers.getChannel)
  .openapi(routes.replaceChannel, handlers.replaceChannel)
  .openapi(routes.deleteChannel, handlers.deleteChannel)
  .openapi(routes.testChannel, handlers.testChannel)
  .openapi(routes.listDeliveries, handlers.listDeliveries);
