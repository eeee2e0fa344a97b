import { createRouter } from "../openapi";
import * as handlers from "./token.handlers";
import * as routes from "./token.routes";

export const tokenRouter = createRouter().openapi(routes.issueToken, handlers.issueToken);
