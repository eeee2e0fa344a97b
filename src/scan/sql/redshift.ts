/**
 * Amazon Redshift over the Redshift Data API (JSON 1.1 over HTTPS, SigV4 via aws4fetch):
 * ExecuteStatement, DescribeStatement until it finishes, GetStatementResult page by page.
 *
 * The Data API does not take a database password: every call is signed with AWS keys, and the
 * database user is either named (DbUser, provisioned clusters: temporary credentials from
 * redshift:GetClusterCredentials) or derived from the IAM identity (Serverless). So a REDSHIFT
 * connection's SIMPLE credential carries `access_key`/`secret_key` (and optionally
 * `session_token`, `region`) beside `username`, which becomes DbUser; its `password` is unused.
 * `endpoint_prefix` is the cluster's endpoint without the port
 * (`mycluster.abc123xyz789.eu-west-1.redshift.amazonaws.com`, or the part before
 * `.redshift.amazonaws.com`); its first label is the cluster identifier (workgroup name for
 * `.redshift-serverless.` endpoints) and its region label picks the Data API's region.
 */

import { AwsClient } from "aws4fetch";
import { outboundFetch } from "../../lib/outbound-fetch";
import { ConnectorError, fetchOrUnreachable, logProviderFailure } from "../connectors/types";
import type { ResultColumn, SqlRunner } from "./runner";
import { statementRunner } from "./statement-lifecycle";
import { cleanDetail, exactNumber, parseJson, trimSlash, type WarehouseRunnerOptions } from "./warehouse-api";

export interface RedshiftConfig {
  endpointPrefix: string;
  /** Default `dev`, the database Redshift creates. */
  database?: string | undefined;
  /** The database user (DbUser) on a provisioned cluster. */
  username: string;
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  sessionToken?: string | undefined;
  /** When the endpoint does not name one. */
  region?: string | undefined;
}

/** Where a Redshift endpoint points: cluster or Serverless workgroup, and region. */
export interface RedshiftTarget {
  clusterIdentifier?: string;
  workgroupName?: string;
  region: string | undefined;
  database: string | undefined;
}

const REGION = /^[a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d+$/;

/** Cluster (or workgroup), region and database from an endpoint such as `c.id.eu-west-1.redshift.amazonaws.com:5439/dev`. */
export function redshiftTarget(endpointPrefix: string): RedshiftTarget {
  const m = /^(?:[a-z]+:\/\/)?([^/:]+)(?::\d+)?(?:\/([^/?]+))?/.exec(endpointPrefix.trim());
  const host = (m?.[1] ?? "").toLowerCase();
  const labels = host.split(".").filter(Boolean);
  const name = labels[0];
  if (!name || !/^[a-z0-9-]+$/.test(name)) {
    throw new ConnectorError("the REDSHIFT endpoint_prefix does not start with a cluster or workgroup name", "invalid");
  }
  const region = labels.find((l) => REGION.test(l));
  const database = m?.[2] ? decodeURIComponent(m[2]) : undefined;
  return labels.includes("redshift-serverless")
    ? { workgroupName: name, region, database }
    : { clusterIdentifier: name, region, database };
}

interface RedshiftField {
  isNull?: boolean;
  booleanValue?: boolean;
  longValue?: number;
  doubleValue?: number;
  stringValue?: string;
  blobValue?: string;
}

interface DataApiAnswer {
  Id?: string;
  Status?: string;
  Error?: string;
  HasResultSet?: boolean;
  ColumnMetadata?: { name?: string; label?: string; typeName?: string }[];
  Records?: RedshiftField[][];
  NextToken?: string;
  __type?: string;
  message?: string;
  Message?: string;
}

const AUTH_ERRORS =
  /AccessDenied|UnrecognizedClient|InvalidSignature|SignatureDoesNotMatch|IncompleteSignature|ExpiredToken|InvalidClientTokenId|MissingAuthenticationToken/;
const BUSY_ERRORS = /Throttling|ActiveStatementsExceeded|ActiveSessionsExceeded|InternalServer|ServiceUnavailable/;

/** A runner on one Redshift cluster or Serverless workgroup through the Data API. */
export async function createRedshiftRunner(
  config: RedshiftConfig,
  options: WarehouseRunnerOptions = {},
): Promise<SqlRunner> {
  const target = redshiftTarget(config.endpointPrefix);
  const region = target.region ?? config.region;
  if (!region)
    throw new ConnectorError("the REDSHIFT endpoint_prefix names no region: add region to the credential", "invalid");
  if (!config.accessKeyId || !config.secretAccessKey) {
    throw new ConnectorError(
      "the Redshift Data API signs every call with AWS keys: add access_key and secret_key to the REDSHIFT credential",
      "auth",
    );
  }
  const database = config.database ?? target.database ?? "dev";
  const url = `${trimSlash(options.endpoint ?? `https://redshift-data.${region}.amazonaws.com`)}/`;
  const client = new AwsClient({
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
    ...(config.sessionToken ? { sessionToken: config.sessionToken } : {}),
    service: "redshift-data",
    region,
    // The scan queue retries with backoff; aws4fetch's own retries would multiply that.
    retries: 0,
  });
  // DbUser is the credential's user name: Redshift's messages may quote it, ours never do.
  const secrets = [config.secretAccessKey, config.sessionToken, config.accessKeyId, config.username];
  const where = target.workgroupName ? `workgroup ${target.workgroupName}` : `cluster ${target.clusterIdentifier}`;

  async function call(action: string, body: Record<string, unknown>): Promise<DataApiAnswer> {
    const init = {
      method: "POST",
      headers: { "content-type": "application/x-amz-json-1.1", "x-amz-target": `RedshiftData.${action}` },
      body: JSON.stringify(body),
    };
    const res = await fetchOrUnreachable(
      url,
      async () => {
        const signed = await client.sign(url, init);
        return outboundFetch(signed.url, { ...init, headers: signed.headers }, { policy: options.policy });
      },
      secrets,
    );
    const text = await res.text().catch(() => "");
    const parsed = (parseJson(text) ?? {}) as DataApiAnswer;
    if (res.ok) return parsed;
    logProviderFailure("redshift-data", res.status, url, text, secrets);
    // JSON 1.1 errors: "__type" names the exception (sometimes prefixed with its namespace).
    const type = (parsed.__type ?? "").split("#").pop() ?? "";
    const detail = cleanDetail(parsed.message ?? parsed.Message, secrets);
    const suffix = `${type ? ` ${type}` : ""}${detail ? `: ${detail}` : ""}`;
    if (res.status === 401 || res.status === 403 || AUTH_ERRORS.test(type)) {
      throw new ConnectorError(`AWS refused the Redshift Data API call for ${where}${suffix}`, "auth");
    }
    if (res.status === 429 || res.status >= 500 || BUSY_ERRORS.test(type)) {
      throw new ConnectorError(`the Redshift Data API is busy (${res.status})${suffix}`, "transient");
    }
    if (/ResourceNotFound/.test(type)) throw new ConnectorError(`Redshift: not found${suffix}`, "not_found");
    if (/DatabaseConnection/.test(type))
      throw new ConnectorError(`Redshift ${where} cannot be reached${suffix}`, "unreachable");
    throw new ConnectorError(`the Redshift Data API refused ${action} (${res.status})${suffix}`, "invalid");
  }

  return statementRunner<string, DataApiAnswer>("redshift", options, {
    provider: "Redshift",
    what: "the Redshift statement",
    noHandle: "the Redshift Data API returned no statement id",
    async submit(sql, params, _budget, started) {
      const request = executeStatementRequest(target, database, config.username, sql, params);
      const id = (await call("ExecuteStatement", request)).Id;
      if (!id) throw new ConnectorError("the Redshift Data API returned no statement id", "transient");
      started(id);
      return { handle: id, answer: await call("DescribeStatement", { Id: id }) };
    },
    running: (status) => status.Status === "SUBMITTED" || status.Status === "PICKED" || status.Status === "STARTED",
    poll: (id) => call("DescribeStatement", { Id: id }),
    async result(status, id, checkOpen) {
      if (status.Status !== "FINISHED") throw statementError(status, secrets);
      if (status.HasResultSet === false || !id) return { rows: [], columns: [] };
      const rows: Record<string, unknown>[] = [];
      let token: string | undefined;
      let described: ResultColumn[] = [];
      do {
        checkOpen();
        const page = await call("GetStatementResult", token ? { Id: id, NextToken: token } : { Id: id });
        const columns = page.ColumnMetadata ?? [];
        if (columns.length > 0)
          described = columns.map((c) => ({ name: c.name ?? c.label ?? "", type: c.typeName ?? "" }));
        for (const r of page.Records ?? []) rows.push(toObject(columns, r));
        token = page.NextToken || undefined;
      } while (token);
      return { rows, columns: described };
    },
    cancel: async (id) => {
      await call("CancelStatement", { Id: id }).catch(() => {});
    },
  });
}

/** The body of ExecuteStatement: a Serverless workgroup's, or a cluster's with its DbUser. */
export function executeStatementRequest(
  target: RedshiftTarget,
  database: string,
  username: string,
  sql: string,
  params: readonly unknown[],
) {
  return {
    Sql: sql,
    Database: database,
    ClientToken: crypto.randomUUID(),
    ...(target.workgroupName
      ? { WorkgroupName: target.workgroupName }
      : { ClusterIdentifier: target.clusterIdentifier, DbUser: username }),
    ...(params.length ? { Parameters: params.map((v, i) => parameter(`p${i}`, v)) } : {}),
  };
}

/** A FAILED or ABORTED statement as an error of the right kind (the message is PostgreSQL-like). */
function statementError(status: DataApiAnswer, secrets: readonly (string | undefined)[]): ConnectorError {
  logProviderFailure("redshift-data", status.Status ?? null, undefined, status.Error, secrets);
  const detail = cleanDetail(status.Error, secrets);
  const suffix = detail ? `: ${detail}` : "";
  if (status.Status === "ABORTED")
    return new ConnectorError(`the Redshift statement was aborted${suffix}`, "transient");
  const message = status.Error ?? "";
  const kind = /does not exist/i.test(message)
    ? "not_found"
    : /permission denied/i.test(message)
      ? "auth"
      : /could not serialize|deadlock|connection|timeout/i.test(message)
        ? "transient"
        : "invalid";
  return new ConnectorError(`Redshift statement failed${suffix}`, kind);
}

/** A named parameter; the Data API takes every value as text and casts it where it is used. */
function parameter(name: string, v: unknown): { name: string; value: string } {
  const value = v instanceof Date ? v.toISOString() : String(v);
  if (v === null || v === undefined || value === "") {
    // The API requires a non-empty value and has no NULL parameter.
    throw new ConnectorError("the Redshift Data API cannot bind a NULL or empty parameter value", "invalid");
  }
  return { name, value };
}

function toObject(
  columns: { name?: string; label?: string; typeName?: string }[],
  record: RedshiftField[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  columns.forEach((col, i) => {
    out[col.label || col.name || `column${i}`] = value(col.typeName ?? "", record[i]);
  });
  return out;
}

function value(type: string, f: RedshiftField | undefined): unknown {
  if (!f || f.isNull) return null;
  if (f.booleanValue !== undefined) return f.booleanValue;
  if (f.longValue !== undefined) return f.longValue;
  if (f.doubleValue !== undefined) return f.doubleValue;
  if (f.blobValue !== undefined) return f.blobValue;
  const s = f.stringValue ?? null;
  if (s === null) return null;
  const t = type.toLowerCase();
  if (t === "numeric" || t === "decimal") return exactNumber(s);
  // "2024-05-01 10:00:00[.ffffff][+00]": UTC when no offset is given.
  if (t === "timestamp" || t === "timestamptz") {
    const iso = s.replace(" ", "T").replace(/([+-]\d\d)$/, "$1:00");
    const d = new Date(/[zZ]|[+-]\d\d:\d\d$/.test(iso) ? iso : `${iso}Z`);
    return Number.isNaN(d.getTime()) ? s : d.toISOString();
  }
  return s;
}
