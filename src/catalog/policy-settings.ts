import { and, eq, type SQL } from "drizzle-orm";
import type { Db } from "../db";
import { insertWhere } from "../db/json-insert";
import { type AttributeKind, assetPolicies } from "../db/schema";
import { DEFAULT_ADAPT_AFTER, DEFAULT_AUTO_CLOSE_AFTER } from "../detection/incident-planner";
import { type PolicyOverrides, PolicyOverridesSchema, resolvePolicies } from "../detection/policies";
import { nowIso } from "../lib/time";

type AssetRef = { tenantId: string; id: number };
type AssetPoliciesRow = typeof assetPolicies.$inferSelect;

/**
 * The asset's policies as they apply: defaults, overrides, the incident auto-close and adoption
 * thresholds, and the attribute kinds a user set.
 */
export async function assetPolicySettings(db: Db, asset: AssetRef) {
  const row = await db.query.assetPolicies.findFirst({
    where: and(eq(assetPolicies.tenantId, asset.tenantId), eq(assetPolicies.assetId, asset.id)),
  });
  return policySettingsOf(row);
}

/** As assetPolicySettings, from the asset's row of settings (none: the defaults). */
export function policySettingsOf(row: AssetPoliciesRow | undefined) {
  const parsed = row ? PolicyOverridesSchema.safeParse(row.overrides) : undefined;
  const overrides: PolicyOverrides = parsed?.success ? parsed.data : {};
  const resolved = resolvePolicies(overrides, row?.notify);
  return {
    notify: row?.notify !== false,
    auto_close_after: row?.autoCloseAfter ?? DEFAULT_AUTO_CLOSE_AFTER,
    adapt_after: row?.adaptAfter ?? DEFAULT_ADAPT_AFTER,
    attribute_kinds: (row?.attributeKinds ?? {}) as Record<string, AttributeKind>,
    overrides,
    policies: Object.values(resolved).map((p) => ({
      id: p.id,
      name: p.name,
      description: p.description,
      dimension: p.dimension,
      kind: p.kind,
      enabled: p.enabled,
      notify: p.notify,
      priority: p.priority,
      params: p.params as Record<string, unknown>,
    })),
  };
}

/**
 * The statement that replaces the asset's overrides, thresholds, attribute kinds and notification
 * switch (each only when sent; a new row takes the defaults for the rest), where `allowed` holds
 * (the caller's access, checked in the same batch); it returns the row as it is then
 * (policySettingsOf).
 */
export function putAssetPolicySettingsStatement(
  db: Db,
  asset: AssetRef,
  input: {
    overrides?: PolicyOverrides;
    auto_close_after?: number;
    adapt_after?: number;
    attribute_kinds?: Record<string, AttributeKind>;
    notify?: boolean;
  },
  allowed: SQL | undefined,
) {
  const sent = {
    overrides: input.overrides,
    autoCloseAfter: input.auto_close_after,
    adaptAfter: input.adapt_after,
    attributeKinds: input.attribute_kinds,
    notify: input.notify,
  };
  const set = Object.fromEntries(Object.entries(sent).filter(([, v]) => v !== undefined));
  const updatedAt = nowIso();
  return insertWhere(
    db,
    assetPolicies,
    { assetId: asset.id, tenantId: asset.tenantId, ...sent, overrides: input.overrides ?? {}, updatedAt },
    allowed,
  )
    .onConflictDoUpdate({ target: assetPolicies.assetId, set: { ...set, updatedAt } })
    .returning();
}
