/**
 * What a full scan of an Iceberg table (HIVE_ICEBERG) asks of the cluster: the Iceberg Spark runtime
 * on its classpath, which a running job can no longer add (the JVM has started), and the catalog
 * `dq` on the connection's Hive metastore that the driver reads `dq.<database>.<table>` through.
 * - EMR (6.5 and later): the `iceberg-defaults` classification `iceberg.enabled=true`, which puts
 *   EMR's own Iceberg build on the cluster (Amazon EMR's "Use an Iceberg cluster with Spark").
 * - Dataproc: `spark.jars.packages` with the runtime built for the image's Spark and Scala (the
 *   image pinned for the run: dataproc_config.image_version, default 2.2-debian12, Spark 3.5 and
 *   Scala 2.12; the release: dataproc_config.iceberg_runtime_version, default 1.6.1); the Iceberg
 *   optional component is not in the v1 API's Component enum that @google-cloud/dataproc ships, so
 *   it is not used.
 * - Databricks: nothing: the runtime has Iceberg built in, and Databricks warns that adding an
 *   Iceberg library conflicts with it.
 */

/** The driver's catalog name (spark/dq_profile.py reads `dq.<database>.<table>`). */
export const ICEBERG_CATALOG = "dq";
/**
 * The Iceberg release whose Spark runtime Dataproc fetches unless dataproc_config.iceberg_runtime_version
 * names another (1.6.1: Spark 3.3 to 3.5, Hive metastores 3.1 and 4).
 */
export const ICEBERG_VERSION = "1.6.1";
/** A Maven release version of Iceberg, as dataproc_config.iceberg_runtime_version takes it. */
export const ICEBERG_VERSION_PATTERN = /^\d{1,3}\.\d{1,3}\.\d{1,3}$/;
/** The Dataproc image pinned for an Iceberg run unless dataproc_config.image_version names another. */
export const DATAPROC_IMAGE = "2.2-debian12";
/**
 * The Spark of each Dataproc 2.x image line with an Iceberg runtime build (all Scala 2.12), from
 * Dataproc's image version lists: 2.1 Spark 3.3, 2.2 and 2.3 Spark 3.5.
 */
const DATAPROC_IMAGE_SPARK: Record<string, string> = { "2.1": "3.3", "2.2": "3.5", "2.3": "3.5" };
/** A Dataproc image version of those lines: 2.2-debian12, 2.2.30-debian12, 2.1-ubuntu20, 2.3-rocky9 … */
export const DATAPROC_IMAGE_PATTERN = /^(2\.[123])(?:\.\d{1,4})?-(?:debian|ubuntu|rocky)\d{1,2}$/;

/** The Spark and Scala of a Dataproc image (one DATAPROC_IMAGE_PATTERN admits). */
export function dataprocImageRuntime(image: string): { spark: string; scala: string } {
  const line = DATAPROC_IMAGE_PATTERN.exec(image)?.[1];
  const spark = line ? DATAPROC_IMAGE_SPARK[line] : undefined;
  if (!spark) throw new Error(`no Spark known for the Dataproc image ${image}`);
  return { spark, scala: "2.12" };
}

/** The Maven coordinate of the Iceberg Spark runtime for a Spark and Scala version and an Iceberg release. */
export const icebergRuntimePackage = (spark: string, scala: string, version: string = ICEBERG_VERSION) =>
  `org.apache.iceberg:iceberg-spark-runtime-${spark}_${scala}:${version}`;

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
