import type { AssetProfile, SchemaField } from "../contracts/profile";
import type { AttributeKind } from "../db/schema";
import type { AssetRef, MetricHistory, PolicyOverridesById } from "./types";

/** Everything one evaluation of an asset's policies looks at. */
export interface EvaluationInput {
  asset: AssetRef;
  job_id: string;
  /** ISO 8601: when the scan ran. Every "now" of the evaluation is this time. */
  scan_time: string;
  profile: AssetProfile;
  /** Schema of the previous scan; without it schema_change stays quiet. */
  previous_schema?: SchemaField[];
  history: MetricHistory;
  overrides?: PolicyOverridesById;
  /** The kind of each attribute (see kinds.ts); inferred from this profile when absent. */
  kinds?: Readonly<Record<string, AttributeKind>>;
  /** false: no investigation (the asset's skip_investigator); default on. */
  investigate?: boolean;
}
