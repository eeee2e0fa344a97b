import { Scalar } from "@scalar/hono-api-reference";
import type { Context } from "hono";
import { requestId } from "hono/request-id";
import type { AppEnv } from "./app-env";
import { createDb } from "./db";
import { assetsRouter } from "./routes/assets/assets.index";
import { authRouter } from "./routes/auth/auth.index";
import { connectionsRouter } from "./routes/connections/connections.index";
import { dataRouter } from "./routes/data/data.index";
import { incidentsRouter } from "./routes/incidents/incidents.index";
import { integrationsRouter } from "./routes/integrations/integrations.index";
import { monitoringRouter } from "./routes/monitoring/monitoring.index";
import { createRouter } from "./routes/openapi";
import { ApiError, toApiError, toProblem } from "./routes/problems";
import { projectsRouter } from "./routes/projects/projects.index";
import { scansRouter } from "./routes/scans/scans.index";
import { settingsRouter } from "./routes/settings/settings.index";
import { sourceGroupsRouter } from "./routes/source-groups/source-groups.index";
import { tenantsRouter } from "./routes/tenants/tenants.index";

function problemResponse(c: Context<AppEnv>, err: ApiError): Response {
  return c.body(JSON.stringify(toProblem(err, c.var.requestId)), err.status, {
    "Content-Type": "application/problem+json",
  });
}

/** The API: middleware, every route group, the OpenAPI document and its reference page. */
export function createApp() {
  const app = createRouter();

  app.use("*", requestId());
  app.use("*", async (c, next) => {
    c.set("db", createDb(c.env.DB));
    await next();
  });

  app.route("/", authRouter);
  app.route("/", tenantsRouter);
  app.route("/", projectsRouter);
  app.route("/", connectionsRouter);
  app.route("/", assetsRouter);
  app.route("/", sourceGroupsRouter);
  app.route("/", settingsRouter);
  app.route("/", scansRouter);
  app.route("/", dataRouter);
  app.route("/", monitoringRouter);
  app.route("/", incidentsRouter);
  app.route("/", integrationsRouter);

  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "X-SVC-Key",
    description: "An API key (tenant- or user-scoped), or the platform administrator's key",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "Bearer", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "A token from POST /auth/token, or from the configured OIDC issuer",
  });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Data quality monitoring API",
      version: "0.1.0",
      description:
        "Watches the quality of data in external stores: scans, alerts, incidents, DQ scores, tickets. " +
        "Errors are application/problem+json (RFC 9457).",
    },
  });
  // The bundle is served from our own static assets (public/docs/scalar.js), not a CDN.
  app.get("/docs", Scalar({ url: "/openapi.json", pageTitle: "Data quality monitoring API", cdn: "/docs/scalar.js" }));
  // Served by the asset router before the Worker when deployed; this route makes it explicit.
  app.get("/docs/scalar.js", (c) => c.env.ASSETS.fetch(c.req.raw));
  app.get("/health", (c) => c.json({ status: "ok" }));

  app.notFound((c) =>
    problemResponse(c, new ApiError(404, "not_found", `No route for ${c.req.method} ${new URL(c.req.url).pathname}`)),
  );

  app.onError((err, c) => {
    const apiError = toApiError(err, c.req.method);
    if (apiError.status >= 500) {
      // The stack goes to the log, keyed by request id; never to the client.
      console.error(JSON.stringify({ request_id: c.var.requestId, error: String(err), stack: (err as Error)?.stack }));
    }
    return problemResponse(c, apiError);
  });

  return app;
}
