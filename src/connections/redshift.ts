/** REDSHIFT: tables of an Amazon Redshift cluster or workgroup, profiled over its Data API. */

import { z } from "zod";
import { createRedshiftRunner } from "../scan/sql/redshift";
import { addressFields, defineConnection } from "./module";
import { apiEndpoint, identifier, text } from "./schema-parts";

export const RedshiftPayload = z
  .strictObject({
    endpoint_prefix: text().meta({
      description:
        "The cluster's endpoint without the port (mycluster.abc123xyz789.eu-west-1.redshift.amazonaws.com, or the part " +
        "before .redshift.amazonaws.com): its first label is the cluster (or serverless workgroup), its region label the Data API's region",
    }),
    database: text(255).optional().meta({ description: "Database the Data API connects to; default dev" }),
    endpoint: apiEndpoint("https://redshift-data.{region}.amazonaws.com"),
  })
  .meta({ id: "RedshiftPayload" });

export type RedshiftPayload = z.infer<typeof RedshiftPayload>;

export const redshift = defineConnection({
  type: "REDSHIFT",
  payload: RedshiftPayload,
  credentialType: () => "SIMPLE",
  changedAddress: addressFields(["endpoint_prefix", "endpoint"]),
  dbType: () => "redshift",
  asset: z.strictObject({ database: identifier, schema: identifier, table: identifier }),
  docs: { asset: "{database, schema, table}", dbType: "redshift" },
  group: { payload: z.strictObject({ database: identifier, schema: identifier }), doc: "{database, schema}" },
  sqlRunner: ({ payload, credential }, options) => {
    const secret = credential.payload;
    return createRedshiftRunner(
      {
        endpointPrefix: payload.endpoint_prefix,
        database: payload.database,
        username: secret.username,
        accessKeyId: secret.access_key,
        secretAccessKey: secret.secret_key,
        sessionToken: secret.session_token,
        region: secret.region,
      },
      { ...options, endpoint: options.endpoint ?? payload.endpoint },
    );
  },
});
