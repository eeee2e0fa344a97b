import { Scalar } from "@scalar/hono-api-reference";
import type { Context } from "hono";
import { requestId } from "hono/request-id";
import type { AppEnv } from "./app-env";
import { createDb } from "./db";
import { meteredD1, newD1Meter, serverTiming } from "./db/metered";
import { requestScopedD1, withRequestD1 } from "./db/request-d1";
import { BOOKMARK_HEADER, isBookmark, RequestSessions, sessionAsDatabase } from "./db/sessions";
import { forgetTenantShard, isTenantMoving, shardDatabase, tenantHome } from "./db/shards";
import { deployedEnvironment, localOnlySettingsDeployed } from "./lib/environment";
import { exampleSecretsInUse } from "./lib/example-secrets";
import { accessRefusal } from "./routes/access";
import { alertsRouter } from "./routes/alerts/alerts.index";
import { apiKeysRouter } from "./routes/api-keys/api-keys.index";
import { assetsRouter } from "./routes/assets/assets.index";
import { auditRouter } from "./routes/audit/audit.index";
import { auditWrites } from "./routes/audit/audit.middleware";
import { batchDataRouter } from "./routes/batch-data/batch-data.index";
import { connectionsRouter } from "./routes/connections/connections.index";
import { dqScoreRouter } from "./routes/dq-score/dq-score.index";
import { incidentsRouter } from "./routes/incidents/incidents.index";
import { jiraRouter } from "./routes/jira/jira.index";
import { membersRouter } from "./routes/members/members.index";
import { metricsRouter } from "./routes/metrics/metrics.index";
import { notificationChannelsRouter } from "./routes/notification-channels/notification-channels.index";
import { registerWebhooks } from "./routes/notification-channels/notification-channels.webhooks";
import { checkUrl, createRouter, documentSessionBookmark } from "./routes/openapi";
import { policiesRouter } from "./routes/policies/policies.index";
import { ApiError, toApiError, toProblem } from "./routes/problems";
import { projectsRouter } from "./routes/projects/projects.index";
import { scanCallbacksRouter } from "./routes/scan-callbacks/scan-callbacks.index";
import { scansRouter } from "./routes/scans/scans.index";
import { sourceGroupsRouter } from "./routes/source-groups/source-groups.index";
import { sparkJobConfigRouter } from "./routes/spark-job-config/spark-job-config.index";
import { staticFile } from "./routes/static-files";
import { tenantOfPath } from "./routes/tenant-of-path";
import { tenantsRouter } from "./routes/tenants/tenants.index";
import { ticketsRouter } from "./routes/tickets/tickets.index";
import { tokenRouter } from "./routes/token/token.index";

/** The tags of the document, in reading order, each with what its operations are for. */
const API_TAGS = [
  { name: "Auth", description: "API keys and the tokens they are exchanged for" },
  { name: "Tenant configuration", description: "Tenants: created and configured by the platform administrator" },
  { name: "Tenant members", description: "Who belongs to a tenant, with which role" },
  { name: "Projects", description: "Projects and their members: the unit of access to assets" },
  { name: "Connections", description: "Where data lives: stores, warehouses, databases, catalogs; credentials sealed" },
  { name: "Assets", description: "The data a project watches: files, tables, queries" },
  { name: "Source groups (deprecated)", description: "Groups of assets of the first API version" },
  { name: "Data upload", description: "Batches uploaded to an asset, scanned from the queue" },
  { name: "Scans", description: "Scan jobs: triggering, progress, alerts of a job" },
  { name: "Policies and DQ score", description: "What a scan judges, per asset, and the DQ score it gives" },
  { name: "DQ score", description: "The DQ score's configuration and history" },
  { name: "Incidents", description: "Alerts folded into incidents, their history, summary and backfill" },
  { name: "Ticket templates", description: "Jira issue templates" },
  { name: "Integrations", description: "The tenant's Jira Cloud integration" },
  { name: "Spark job configuration", description: "Spark settings of full scans" },
  { name: "Notifications", description: "Channels that receive incident events: signed webhooks, Slack" },
  { name: "Audit", description: "Every write under a tenant: who, what, when, how it ended" },
];

function problemResponse(c: Context<AppEnv>, err: ApiError): Response {
  return c.body(JSON.stringify(toProblem(err, c.var.requestId)), err.status, {
    ...err.headers,
    "Content-Type": "application/problem+json",
  });
}

/**
 * Sets headers (`append`: added beside any of the same name) on the response a handler has made.
 * `c.header()` on a finalized context copies the whole Response for each header it sets (it cannot
 * know the headers are mutable); ours are, unless a handler returns a fetched response, whose
 * immutable headers still go through `c.header()`.
 */
function setHeaders(c: Context<AppEnv>, headers: readonly (readonly [string, string, boolean])[]): void {
  if (c.finalized) {
    try {
      const target = c.res.headers;
      for (const [name, value, append] of headers) {
        if (append) target.append(name, value);
        else target.set(name, value);
      }
      return;
    } catch (err) {
      if (!(err instanceof TypeError)) throw err;
      // Immutable headers: nothing was set (the first header threw), so copy the response once below.
    }
  }
  for (const [name, value, append] of headers) c.header(name, value, { append });
}

/** The document's head; the server is the origin the document is read from, so one document serves every deployment. */
const openApiConfig = (origin: string) => ({
  openapi: "3.1.0",
  info: {
    title: "Data quality monitoring API",
    version: "0.1.0",
    description:
      "Watches the quality of data in external stores: scans, alerts, incidents, DQ scores, tickets. " +
      "Errors are application/problem+json (RFC 9457).",
    license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
  },
  servers: [{ url: origin, description: "This deployment" }],
  tags: API_TAGS,
});

/** The API: middleware, every route group, the OpenAPI document and its reference page. */
export function createApp() {
  const app = createRouter();

  app.use("*", requestId());
  // Deployed with an example secret, or with a setting of local development: refuse everything but
  // the health check, naming the variables.
  app.use("*", async (c, next) => {
    const unsafe = exampleSecretsInUse(c.env);
    const localOnly = localOnlySettingsDeployed(c.env);
    if ((unsafe.length === 0 && localOnly.length === 0) || c.req.path === "/health") return next();
    console.error(JSON.stringify({ event: "misconfigured_deployment", variables: [...unsafe, ...localOnly] }));
    const details = [
      unsafe.length > 0 &&
        `The service is deployed with the example value of ${unsafe.join(", ")} (from .dev.vars.example); set each with \`wrangler secret put\`.`,
      localOnly.length > 0 &&
        `The ${deployedEnvironment(c.env)} deployment has ${localOnly.join(", ")}, a setting of local development only; remove it with \`wrangler secret delete\`.`,
    ];
    return problemResponse(c, new ApiError(503, "misconfigured", details.filter(Boolean).join(" ")));
  });
  app.use("*", async (c, next) => {
    const meter = newD1Meter();
    // Queries run in a D1 session (src/db/sessions.ts): a read may go to a replica, at least as
    // new as the bookmark the client sends back.
    const bookmark = c.req.header(BOOKMARK_HEADER)?.trim() || undefined;
    if (bookmark !== undefined && !isBookmark(bookmark)) {
      throw ApiError.badRequest("The request is invalid; see errors", [
        { path: `header.${BOOKMARK_HEADER}`, message: "not a bookmark this API gave out" },
      ]);
    }
    // The database of the tenant the path names (src/db/shards.ts; the isolate's cache, no round
    // trip while fresh); `DB` for the paths of no tenant.
    const tenant = tenantOfPath(c.req.path);
    const home = tenant === undefined ? undefined : await tenantHome(c.env, tenant);
    if (tenant !== undefined && home) c.set("home", { tenantId: tenant, ...home });
    const sessions = new RequestSessions(home ? shardDatabase(c.env, home.shard) : c.env.DB, c.req.method, bookmark);
    const metered = (session: D1DatabaseSession) => meteredD1(sessionAsDatabase(session), meter);
    // One database for all requests of the isolate (its prepared queries built once), whose
    // statements run on this request's metered session (src/db/request-d1.ts).
    c.set("db", createDb(requestScopedD1));
    c.set("dbFromPrimary", () => createDb(metered(sessions.fromPrimary())));
    c.set("bookmarks", { sent: bookmark, seen: () => sessions.bookmark() });
    try {
      await withRequestD1(metered(sessions.main), next);
      // A write the tenant's shard refused as moving: the next request reads the directory again.
      if (tenant !== undefined && c.error && isTenantMoving(c.error)) forgetTenantShard(tenant);
    } finally {
      // What the request cost in D1 calls (src/db/metered.ts); bench/api reads it.
      const seen = sessions.bookmark();
      setHeaders(c, [
        ["Server-Timing", serverTiming(meter), true],
        ...(seen ? [[BOOKMARK_HEADER, seen, false] as const] : []),
      ]);
    }
  });
  // The input checks (checkInput) are each route's middleware, after its access check.
  app.use("*", auditWrites);

  // One router per resource (src/routes/<resource>/). Order matters where two paths can match one
  // URL: the first registered wins (e.g. …/incidents/historical/{jobId} before …/incidents/{incidentId}/tickets).
  app.route("/", tokenRouter);
  app.route("/", apiKeysRouter);
  app.route("/", tenantsRouter);
  app.route("/", projectsRouter);
  app.route("/", membersRouter);
  app.route("/", connectionsRouter);
  app.route("/", assetsRouter);
  app.route("/", sourceGroupsRouter);
  app.route("/", sparkJobConfigRouter);
  app.route("/", dqScoreRouter);
  app.route("/", scansRouter);
  app.route("/", scanCallbacksRouter);
  app.route("/", batchDataRouter);
  app.route("/", policiesRouter);
  app.route("/", metricsRouter);
  app.route("/", incidentsRouter);
  app.route("/", alertsRouter);
  app.route("/", jiraRouter);
  app.route("/", ticketsRouter);
  app.route("/", auditRouter);
  app.route("/", notificationChannelsRouter);

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
  registerWebhooks(app.openAPIRegistry);
  // The server is the origin the document is read from: the same document serves every deployment.
  // As app.doc31 serves it, with the session bookmark header declared on every authenticated operation.
  app.get("/openapi.json", (c) =>
    c.json(documentSessionBookmark(app.getOpenAPI31Document(openApiConfig(new URL(c.req.url).origin)))),
  ); // The bundle is served by the Worker itself (src/routes/static-files.ts), not a CDN.
  app.get("/docs", Scalar({ url: "/openapi.json", pageTitle: "Data quality monitoring API", cdn: "/docs/scalar.js" }));
  app.get("/docs/scalar.js", (c) => staticFile(c, c.req.path) ?? c.notFound());
  // The dashboard (app/, built by npm install): static files, routed in the page's hash.
  app.get("/app", (c) => c.redirect("/app/", 301));
  app.get("/app/index.html", (c) => c.redirect("/app/", 301));
  app.get("/app/*", (c) => staticFile(c, c.req.path) ?? c.notFound());
  app.get("/health", (c) => c.json({ status: "ok" }));

  app.notFound((c) => {
    // A URL that is not even percent-encoded UTF-8 is a 400, whichever route it was meant for.
    checkUrl(c);
    return problemResponse(
      c,
      new ApiError(404, "not_found", `No route for ${c.req.method} ${new URL(c.req.url).pathname}`),
    );
  });

  app.onError(async (err, c) => {
    // The route's access check answers first: a caller without access learns nothing from how its
    // input or the handler failed (src/routes/access.ts).
    const apiError = toApiError((await accessRefusal(c)) ?? err, c.req.method);
    if (apiError.status >= 500) {
      // The stack goes to the log, keyed by request id; never to the client.
      console.error(JSON.stringify({ request_id: c.var.requestId, error: String(err), stack: (err as Error)?.stack }));
    }
    return problemResponse(c, apiError);
  });

  return app;
}
