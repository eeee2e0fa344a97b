/** BIGQUERY: tables of a Google BigQuery project, profiled with jobs.query as a service account. */

import { z } from "zod";
import { tableOf } from "../scan/sql";
import { createBigQueryRunner } from "../scan/sql/bigquery";
import { addressFields, defineConnection } from "./module";
import { apiEndpoint, identifier, text } from "./schema-parts";
import { dataprocStart, sparkFields } from "./spark";

export const BigQueryPayload = z
  .strictObject({
    project: text(255).meta({
      description: "The GCP project whose datasets the assets name (and that runs the queries)",
    }),
    location: text(64).optional().meta({ description: "Location of the datasets (US, EU, europe-west1…)" }),
    endpoint: apiEndpoint("https://bigquery.googleapis.com"),
  })
  .meta({ id: "BigQueryPayload" });

export type BigQueryPayload = z.infer<typeof BigQueryPayload>;

export const bigquery = defineConnection({
  type: "BIGQUERY",
  payload: BigQueryPayload,
  credentialType: () => "GCP",
  changedAddress: addressFields(["endpoint"]),
  dbType: () => "bigquery",
  /** The GCP project comes from the connection. */
  asset: z.strictObject({ dataset: identifier, table: identifier }),
  docs: { asset: "{dataset, table} (the GCP project comes from the connection)", dbType: "bigquery" },
  group: {
    payload: z.strictObject({ dataset: identifier }),
    doc: "{dataset} (the GCP project comes from the connection)",
  },
  lightScan: true,
  sqlRunner: ({ payload, credential }, options) => {
    const secret = credential.payload;
    return createBigQueryRunner(
      {
        project: payload.project,
        location: payload.location,
        serviceAccount: {
          client_email: secret.client_email,
          private_key: secret.private_key,
          private_key_id: secret.private_key_id,
          ...(secret.token_uri ? { token_uri: secret.token_uri } : {}),
        },
      },
      { ...options, endpoint: options.endpoint ?? payload.endpoint },
    );
  },
  sparkTarget: (c) => dataprocStart(c.credential.payload),
  sparkSource: (payload, { asset, request }) => {
    const { project } = sparkFields("BIGQUERY", z.looseObject({ project: z.string() }), payload);
    const t = tableOf(asset, request.table);
    return { kind: "table", format: "bigquery", table: [project, t.schema, t.name].filter(Boolean).join(".") };
  },
});
