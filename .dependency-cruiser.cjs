/**
 * Import rules, checked in CI (`npm run lint:deps`): dependencies point one way,
 * routes → domain → db/lib, and nothing imports in a circle.
 */
const DOMAIN = "^src/(auth|tenancy|catalog|settings|scan|detection|monitor|pipeline|incidents|integrations|jobs)/";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import cycle (between files) makes load order and ownership unclear.",
      from: { path: "^src/" },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    {
      name: "no-type-circular",
      severity: "error",
      comment: "Even type-only cycles tie two modules together: break them by moving the shared type down.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "domain-not-to-routes",
      severity: "error",
      comment: "Domain code knows nothing of HTTP: it never imports the route layer or Hono.",
      from: { path: DOMAIN, pathNot: "^src/auth/(authenticate|access)\\.ts$" },
      to: { path: ["^src/routes/", "^src/app", "^node_modules/(hono|@hono)/"] },
    },
    {
      name: "detection-is-an-engine",
      severity: "error",
      comment:
        "detection/ is pure functions of profiles and histories: it imports lib/, db/, the profile's shape and nothing above (no D1, no Durable Object, no service).",
      from: { path: "^src/detection/" },
      to: { path: "^src/(?!lib/|db/|detection/|scan/profile\\.ts$|scan/profiler/patterns\\.ts$)" },
    },
    {
      name: "connections-is-an-engine",
      severity: "error",
      comment:
        "connections/ (the connection-type registry) opens scan/'s connectors: it imports lib/, db/, scan/ and nothing above (no catalog, job, pipeline, monitor or route).",
      from: { path: "^src/connections/" },
      to: { path: "^src/(?!lib/|db/|scan/|connections/)" },
    },
    {
      name: "lib-db-at-the-bottom",
      severity: "error",
      comment: "lib/ and db/ serve everyone and import no layer above them.",
      from: { path: "^src/(lib|db)/" },
      to: { path: "^src/(?!lib/|db/)" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
