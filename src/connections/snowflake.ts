/** SNOWFLAKE: tables of a Snowflake account, profiled over its SQL API with a SIMPLE credential. */

import { z } from "zod";
import { createSnowflakeRunner } from "../scan/sql/snowflake";
import { addressFields, defineConnection } from "./module";
import { apiEndpoint, identifier, text } from "./schema-parts";

export const SnowflakePayload = z
  .strictObject({
    account: text(255).meta({
      description: "Account identifier as in its host name: myorg-myaccount or xy12345.eu-west-1.aws",
    }),
    warehouse: text(255).meta({ description: "The virtual warehouse that runs the statements" }),
    role: text(255).meta({ description: "The role the statements run with" }),
    database: text(255).optional().meta({ description: "Default database of the statements" }),
    schema: text(255).optional().meta({ description: "Default schema of the statements" }),
    endpoint: apiEndpoint("https://{account}.snowflakecomputing.com"),
  })
  .meta({ id: "SnowflakePayload" });

export type SnowflakePayload = z.infer<typeof SnowflakePayload>;

export const snowflake = defineConnection({
  type: "SNOWFLAKE",
  payload: SnowflakePayload,
  credentialType: () => "SIMPLE",
  changedAddress: addressFields(["account", "endpoint"]),
  dbType: () => "snowflake",
  asset: z.strictObject({ database: identifier, schema: identifier, table: identifier }),
  docs: { asset: "{database, schema, table}", dbType: "snowflake" },
  group: { payload: z.strictObject({ database: identifier, schema: identifier }), doc: "{database, schema}" },
  lightScan: true,
  sqlRunner: ({ payload, credential }, options) =>
    createSnowflakeRunner(
      {
        account: payload.account,
        warehouse: payload.warehouse,
        role: payload.role,
        database: payload.database,
        schema: payload.schema,
        username: credential.payload.username,
        password: credential.payload.password,
        privateKey: credential.payload.private_key,
      },
      { ...options, endpoint: options.endpoint ?? payload.endpoint },
    ),
});
