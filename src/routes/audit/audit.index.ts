import { createRouter } from "../openapi";
import * as handlers from "./audit.handlers";
import * as routes from "./audit.routes";

export const auditRouter = createRouter().openapi(routes.listAuditEvents, handlers.listAuditEvents);
