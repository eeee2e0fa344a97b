/**
 * What a full scan of an Iceberg table (HIVE_ICEBERG) asks of the cluster: the Iceberg Spark runtime
 * on its classpath, which a running job can no longer add (the JVM has started), and the catalog
 * `dq` on the connection's Hive metastore that the driver reads `dq.<database>.<table>` through.
 * - EMR (6.5 and later): the `iceberg-defaults` classification `iceberg.enabled=true`, which puts
 *   EMR's own Iceberg build on the cluster (Amazon EMR's "Use an Iceberg cluster with Spark").
 * - Dataproc: `spark.jars.packages` with the runtime built for the pinned image's Spark and Scala
 *   (2.2: Spark 3.5, Scala 2.12); the Iceberg optional component is not in the v1 API's Component
 *   enum that @google-cloud/dataproc ships, so it is not used.
 * - Databricks: nothing: the runtime has Iceberg built in, and Databricks warns that adding an
 *   Iceberg library conflicts with it.
 */

/** The driver's catalog name (spark/dq_profile.py reads `dq.<database>.<table>`). */
export const ICEBERG_CATALOG = "dq";
/** The Iceberg release whose Spark runtime Dataproc fetches (supports Spark 3.5, Hive metastores 3.1 and 4). */
export const ICEBERG_VERSION = "1.6.1";
/** The Dataproc image pinned when the runtime is added, so the runtime's Spark and Scala match it. */
export const DATAPROC_ICEBERG_IMAGE = { version: "2.2-debian12", spark: "3.5", scala: "2.12" } as const;

/** The Maven coordinate of the Iceberg Spark runtime for a Spark and Scala version. */
export const icebergRuntimePackage = (spark: string, scala: string) =>
  `org.apache.iceberg:iceberg-spark-runtime-${spark}_${scala}:${ICEBERG_VERSION}`;

/** The catalog `dq`: Iceberg's SparkCatalog on the Hive metastore at `metastoreUri` (thrift://…). */
export function icebergCatalogConf(metastoreUri: string): Record<string, string> {
  const key = `spark.sql.catalog.${ICEBERG_CATALOG}`;
  return { [key]: "org.apache.iceberg.spark.SparkCatalog", [`${key}.type`]: "hive", [`${key}.uri`]: metastoreUri };
}

/**
 * A run's Spark settings for what the driver reads: an Iceberg source adds the catalog (the tenant's
 * own spark_properties win) and asks the provider for the runtime (`iceberg`).
 */
export function sparkSettingsFor(
  source: Record<string, unknown>,
  sparkConf: Record<string, string>,
): { sparkConf: Record<string, string>; iceberg?: true } {
  if (source.kind !== "iceberg" || typeof source.metastore_uri !== "string") return { sparkConf };
  return { sparkConf: { ...icebergCatalogConf(source.metastore_uri), ...sparkConf }, iceberg: true };
}

/** Whether an EMR release has the iceberg-defaults classification (emr-6.5.0 and later). */
export function emrHasIceberg(releaseLabel: string): boolean {
  const m = /^emr-(\d+)\.(\d+)\./.exec(releaseLabel);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 6 || (major === 6 && minor >= 5);
}

/** Adds the runtime's package to a `spark.jars.packages` list (comma-separated), once. */
export function withPackage(packages: string | undefined, coordinate: string): string {
  const list = (packages ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  return list.includes(coordinate) ? list.join(",") : [...list, coordinate].join(",");
}
