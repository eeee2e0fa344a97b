/**
 * Import rules, checked in CI (`npm run lint:deps`). src/ is five ordered layers (docs/architecture.md,
 * "Layers"); a module may import its own layer and the layers below it, never one above, type-only
 * imports included. Within a layer, folders may import each other as long as no two folders import
 * each other, however indirectly (no folder cycle), and no file takes part in an import cycle.
 */

/** Layer 0: utilities and the database, used by everyone. */
const LIB_DB = "^src/(lib|db)/";
/** Layer 1: the shapes several layers share (queue messages, the AssetMonitor's stub) and the bindings. */
const CONTRACTS = "^src/(contracts/|env\\.ts$)";
/** Layer 2: the engines, pure of D1 rows they do not own: scans, detection, connection types. */
const ENGINES = "^src/(scan|detection|connections)/";
/** Layer 3: the services, domain operations over D1 and the engines. */
const SERVICES =
  "^src/(auth|tenancy|audit|catalog|settings|jobs|pipeline|incidents|notifications|integrations|retention)/";
/** Layer 4: the entry points: HTTP, queue consumers, the scheduled handler, the Durable Object. */
const ENTRY_POINTS = "^src/((routes|consumers|cron|monitor)/|(app|app-env|index)\\.ts$)";

const above = (...layers) => ({ path: layers });

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "layer-0-lib-db",
      severity: "error",
      comment: "lib/ and db/ serve every layer and import none above them.",
      from: { path: LIB_DB },
      to: above(CONTRACTS, ENGINES, SERVICES, ENTRY_POINTS),
    },
    {
      name: "layer-1-contracts",
      severity: "error",
      comment: "contracts/ and env.ts are shapes: they import lib/ and db/ only.",
      from: { path: CONTRACTS },
      to: above(ENGINES, SERVICES, ENTRY_POINTS),
    },
    {
      name: "layer-2-engines",
      severity: "error",
      comment: "Engines (scan/, detection/, connections/) know no service and no entry point.",
      from: { path: ENGINES },
      to: above(SERVICES, ENTRY_POINTS),
    },
    {
      name: "layer-3-services",
      severity: "error",
      comment: "Services know no entry point: no route, consumer, cron handler or Durable Object class.",
      from: { path: SERVICES },
      to: above(ENTRY_POINTS),
    },
    {
      name: "no-folder-cycle",
      severity: "error",
      comment: "Two folders that import each other, however indirectly, are one tangle: move the shared part down.",
      scope: "folder",
      from: { path: "^src/" },
      to: { circular: true },
    },
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
      name: "hono-only-at-the-edge",
      severity: "error",
      comment: "Only the entry points know HTTP: below them nothing imports Hono.",
      from: { path: [LIB_DB, CONTRACTS, ENGINES, SERVICES] },
      to: { path: "^node_modules/(hono|@hono)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
