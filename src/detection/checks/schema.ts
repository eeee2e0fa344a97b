/** The schema as a scan saw it, and as the next scan is compared with (schema_change, the AssetMonitor). */
import { type AssetProfile, type SchemaField, UNKNOWN_TYPE } from "../../contracts/profile";
import { hasValues } from "../metrics";

/** The schema as a scan saw it: an attribute without a declared type or a value has no type yet. */
export function seenSchema(profile: Pick<AssetProfile, "schema" | "attributes">): SchemaField[] {
  const untyped = new Set(
    profile.attributes.filter((a) => a.declared_type === undefined && !hasValues(a)).map((a) => a.name),
  );
  if (untyped.size === 0) return profile.schema;
  return profile.schema.map((f) => (untyped.has(f.name) ? { ...f, type: UNKNOWN_TYPE } : f));
}

/**
 * The schema the next scan is compared with: this scan's, where each attribute with no type now
 * keeps the type it last had, so integer → (a batch of nulls) → integer is no change, and
 * integer → (nulls) → string still is.
 */
export function rememberedSchema(previous: readonly SchemaField[] | undefined, seen: SchemaField[]): SchemaField[] {
  const known = new Map((previous ?? []).filter((f) => f.type !== UNKNOWN_TYPE).map((f) => [f.name, f.type]));
  return seen.map((f) => {
    const type = f.type === UNKNOWN_TYPE ? known.get(f.name) : undefined;
    return type ? { ...f, type } : f;
  });
}
