/**
 * jira.js's models of Jira Cloud's REST API v3 (zod schemas generated from Atlassian's OpenAPI
 * document), loaded by Node's own loader: the test runner's module graph evaluates jira.js's
 * circular model imports out of order (a global setup then fails reading `.shape` of undefined).
 * Node 22's require() of an ES module; the npm scripts run Node 22 (scripts/node22.mjs).
 */

import { createRequire } from "node:module";
import { packageFile } from "./dts-shapes";

const require = createRequire(import.meta.url);

export const jiraModels = require(
  packageFile("jira.js", "dist/cloud/models/index.js"),
) as typeof import("jira.js/cloud");
