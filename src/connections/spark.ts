/**
 * The Spark providers a connection's credential can start a full scan on (DELTALAKE's token →
 * Databricks, AWS keys → EMR, a GCP service account → Dataproc), opened with the clients of
 * scan/spark. A provider block is the tenant's Spark job configuration for it.
 */

import { z } from "zod";
import type { OutboundPolicy } from "../lib/outbound";
import { ConnectorError } from "../scan/connectors/types";
import type { DataprocBlock } from "../scan/spark/dataproc";
import { dataprocWorkflows } from "../scan/spark/dataproc";
import type { EmrBlock } from "../scan/spark/emr";
import { emrJobFlows } from "../scan/spark/emr";
import type { SparkProviderClient } from "../scan/spark/provider";
import type { CredentialOf } from "./credentials";

/** A provider block as the settings hold it (its own fields are the provider's). */
export type ProviderBlock = Record<string, unknown>;

/** The provider a connection starts, and its client for a block of the tenant's configuration. */
export interface SparkStart {
  provider: "DATABRICKS" | "EMR" | "DATAPROC";
  client(block: ProviderBlock, policy: OutboundPolicy): SparkProviderClient;
}

const blockText = (block: ProviderBlock, key: string) =>
  typeof block[key] === "string" ? (block[key] as string) : undefined;

/** EMR with AWS keys, in the block's region, else the connection's, else us-east-1. */
export function emrStart(aws: CredentialOf<"AWS">["payload"], region: string | undefined): SparkStart {
  return {
    provider: "EMR",
    client: (block, policy) => {
      const endpoint = blockText(block, "endpoint");
      return emrJobFlows(
        {
          accessKeyId: aws.access_key,
          secretAccessKey: aws.secret_key,
          region: blockText(block, "region") ?? region ?? "us-east-1",
          ...(endpoint ? { endpoint } : {}),
          block: block as EmrBlock,
        },
        policy,
      );
    },
  };
}

/** Dataproc with a GCP service account, in the block's project (else the account's) and region. */
export function dataprocStart(gcp: CredentialOf<"GCP">["payload"]): SparkStart {
  return {
    provider: "DATAPROC",
    client: (block, policy) => {
      const endpoint = blockText(block, "endpoint");
      return dataprocWorkflows(
        {
          project: blockText(block, "project_id") ?? gcp.project_id,
          region: blockText(block, "region") ?? "us-central1",
          ...(endpoint ? { endpoint } : {}),
          account: {
            client_email: gcp.client_email,
            private_key: gcp.private_key,
            private_key_id: gcp.private_key_id,
            ...(gcp.token_uri ? { token_uri: gcp.token_uri } : {}),
          },
          block: block as DataprocBlock,
        },
        policy,
      );
    },
  };
}

/** What a scan request may set of what a full scan reads, instead of the asset's payload. */
export interface SparkRequest {
  path?: string;
  format?: string;
  delimiter?: string;
  table?: string;
}

/** What a module's driver source is built from, besides the connection's payload. */
export interface SparkSourceInput {
  /** The asset's payload as its row holds it. */
  asset: Record<string, unknown>;
  request: SparkRequest;
  /** URI scheme the cluster reads S3 objects with (EMR: s3, elsewhere s3a). */
  s3Scheme: "s3" | "s3a";
}

/**
 * The fields of a stored payload a driver source reads, parsed (only those: the rest of the
 * payload was checked when it was written); a row that lacks them is an `invalid` connector error.
 */
export function sparkFields<T>(type: string, schema: z.ZodType<T>, payload: unknown): T {
  const parsed = schema.safeParse(payload);
  if (!parsed.success) throw new ConnectorError(`the ${type} connection's payload is not valid`, "invalid");
  return parsed.data;
}

const FileAsset = z.looseObject({ path: z.string().optional(), format: z.string().optional() });

/** The driver source of files at `uri(path)`: the request's path, format and delimiter, else the asset's. */
export function filesSource(type: string, input: SparkSourceInput, uri: (path: string) => string) {
  const asset = sparkFields(type, FileAsset, input.asset);
  const { request } = input;
  return {
    kind: "files",
    uri: uri((request.path ?? asset.path ?? "").replace(/^\/+/, "")),
    format: request.format ?? asset.format ?? "csv",
    ...(request.delimiter ? { delimiter: request.delimiter } : {}),
  };
}
