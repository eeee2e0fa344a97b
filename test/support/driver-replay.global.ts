/**
 * The Spark driver's profile for workerd tests, which cannot run DuckDB or python3 themselves:
 * POST {setup, columns, options} to the provided `driverReplay` URL, where `setup` are DuckDB
 * statements that create the relation `dq_source` (its rows included), `columns` its schema as
 * Spark gives it, and the answer is {profile}: the driver's profile, its statements run on DuckDB
 * (spark-replay.ts). A fresh in-memory database per request.
 */

import { createServer, type Server } from "node:http";
import { DuckDBInstance } from "@duckdb/node-api";
import type { TestProject } from "vitest/node";
import { driverProfile, type SparkColumns } from "./spark-replay";
import { HOST, readBody, send } from "./warehouses/shared";

declare module "vitest" {
  export interface ProvidedContext {
    driverReplay: string;
  }
}

export interface DriverReplayRequest {
  setup: string[];
  columns: SparkColumns;
  options: Record<string, unknown>;
}

export default async function setup(project: TestProject) {
  const server: Server = createServer((req, res) => {
    (async () => {
      const request = JSON.parse((await readBody(req)).toString("utf8")) as DriverReplayRequest;
      const instance = await DuckDBInstance.create(":memory:");
      const db = await instance.connect();
      try {
        for (const statement of request.setup) await db.run(statement);
        send(res, 200, { profile: await driverProfile(db, request.columns, request.options) });
      } finally {
        db.closeSync();
      }
    })().catch((err) => send(res, 500, { message: String(err) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, HOST, () => resolve());
  });
  project.provide("driverReplay", `http://${HOST}:${(server.address() as { port: number }).port}/profile`);
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}
