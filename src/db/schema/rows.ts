/** The row type of each table, as drizzle reads it: the one declaration of each, for every layer. */

import type { assetLineage, assets, scanJobs, sourceGroups } from "./assets";
import type { apiKeys } from "./auth";
import type { connections } from "./connections";
import type { incidentBackfills, incidentHistory, incidents, jiraIntegrations, ticketRequests } from "./incidents";
import type { alerts, assetPolicies, dqScores } from "./monitoring";
import type { dqScoreConfigs, sparkJobConfigs, ticketTemplates } from "./settings";
import type { projectMembers, projects, tenantMembers, tenants } from "./tenancy";

export type TenantRow = typeof tenants.$inferSelect;
export type TenantMemberRow = typeof tenantMembers.$inferSelect;
export type ProjectRow = typeof projects.$inferSelect;
export type ProjectMemberRow = typeof projectMembers.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type ConnectionRow = typeof connections.$inferSelect;
export type AssetRow = typeof assets.$inferSelect;
/** An asset's row without its attributes (assetHeadColumns). */
export type AssetHead = Omit<AssetRow, "attributes">;
export type AssetLineageRow = typeof assetLineage.$inferSelect;
export type SourceGroupRow = typeof sourceGroups.$inferSelect;
export type ScanJobRow = typeof scanJobs.$inferSelect;
export type AlertRow = typeof alerts.$inferSelect;
/**
 * An alert as its asset's Durable Object keeps it (issue 38): the row without what the object
 * is (tenant, asset) and what only D1's cross-asset filters needed (project, connection).
 */
export type KeptAlert = Omit<AlertRow, "tenantId" | "assetId" | "projectId" | "connectionId">;
export type DqScoreRow = typeof dqScores.$inferSelect;
export type AssetPolicyRow = typeof assetPolicies.$inferSelect;
export type IncidentRow = typeof incidents.$inferSelect;
export type IncidentHistoryRow = typeof incidentHistory.$inferSelect;
export type IncidentBackfillRow = typeof incidentBackfills.$inferSelect;
export type JiraIntegrationRow = typeof jiraIntegrations.$inferSelect;
export type TicketRequestRow = typeof ticketRequests.$inferSelect;
export type TicketTemplateRow = typeof ticketTemplates.$inferSelect;
export type SparkJobConfigRow = typeof sparkJobConfigs.$inferSelect;
export type DqScoreConfigRow = typeof dqScoreConfigs.$inferSelect;
