import { createRouter } from "../openapi";
import * as handlers from "./tickets.handlers";
import * as routes from "./tickets.routes";

/** Ticket templates, and the tickets (Jira issues) of incidents. */
export const ticketsRouter = createRouter()
  .openapi(routes.createTicketTemplate, handlers.createTicketTemplate)
  .openapi(routes.listTicketTemplates, handlers.listTicketTemplates)
  .openapi(routes.getTicketTemplate, handlers.getTicketTemplate)
  .openapi(routes.updateTicketTemplate, handlers.updateTicketTemplate)
  .openapi(routes.createTicket, handlers.createTicket)
  .openapi(routes.listTickets, handlers.listTickets);
