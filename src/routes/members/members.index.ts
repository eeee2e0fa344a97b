import { createRouter } from "../openapi";
import * as handlers from "./members.handlers";
import * as routes from "./members.routes";

/** The members of a project, and of the tenant. */
export const membersRouter = createRouter()
  .openapi(routes.listProjectMembers, handlers.listProjectMembers)
  .openapi(routes.addProjectMember, handlers.addProjectMember)
  .openapi(routes.changeProjectMember, handlers.changeProjectMember)
  .openapi(routes.removeProjectMember, handlers.removeProjectMember)
  .openapi(routes.listTenantMembers, handlers.listTenantMembers)
  .openapi(routes.putTenantMember, handlers.putTenantMember)
  .openapi(routes.removeTenantMember, handlers.removeTenantMember);
