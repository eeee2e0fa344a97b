import type { TestProject } from "vitest/node";
import { applyMigrations, dropStateDir, startWorker, tempStateDir } from "../bench/support/wrangler-dev";

declare module "vitest" {
  export interface ProvidedContext {
    /** The Worker under `wrangler dev` for this run: its origin and the platform administrator's key. */
    worker: { base: string; adminKey: string };
  }
}

export default async function setup(project: TestProject) {
  const state = tempStateDir("dq-test-node-");
  applyMigrations(state);
  // As in local development (.dev.vars): the CLI's tests point a connection at a server of their own.
  const worker = await startWorker(state, { args: ["--var", "ALLOW_PRIVATE_TARGETS:true"] });
  project.provide("worker", { base: worker.base, adminKey: worker.adminKey });
  return () => {
    worker.stop();
    dropStateDir(state, false);
  };
}
