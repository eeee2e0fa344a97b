-- The fence of a tenant that is moving between shards (src/db/schema/shards.ts, tenant_fences;
-- decision 0013): on every table of tenant rows, an insert, update or delete of a row of a tenant
-- this database has fenced fails with 'tenant_moving', whoever writes. The move's own batches
-- set the fence 'open' first and 'fenced' again last.
--> statement-breakpoint
CREATE TRIGGER alerts_fence_insert BEFORE INSERT ON alerts WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER alerts_fence_update BEFORE UPDATE ON alerts WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER alerts_fence_delete BEFORE DELETE ON alerts WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER tenants_fence_insert BEFORE INSERT ON tenants WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER tenants_fence_update BEFORE UPDATE ON tenants WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER tenants_fence_delete BEFORE DELETE ON tenants WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER api_keys_fence_insert BEFORE INSERT ON api_keys WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER api_keys_fence_update BEFORE UPDATE ON api_keys WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER api_keys_fence_delete BEFORE DELETE ON api_keys WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER projects_fence_insert BEFORE INSERT ON projects WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER projects_fence_update BEFORE UPDATE ON projects WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER projects_fence_delete BEFORE DELETE ON projects WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER connections_fence_insert BEFORE INSERT ON connections WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER connections_fence_update BEFORE UPDATE ON connections WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER connections_fence_delete BEFORE DELETE ON connections WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER assets_fence_insert BEFORE INSERT ON assets WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER assets_fence_update BEFORE UPDATE ON assets WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER assets_fence_delete BEFORE DELETE ON assets WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER asset_lineage_fence_insert BEFORE INSERT ON asset_lineage WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER asset_lineage_fence_update BEFORE UPDATE ON asset_lineage WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER asset_lineage_fence_delete BEFORE DELETE ON asset_lineage WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER asset_monitor_marks_fence_insert BEFORE INSERT ON asset_monitor_marks WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER asset_monitor_marks_fence_update BEFORE UPDATE ON asset_monitor_marks WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER asset_monitor_marks_fence_delete BEFORE DELETE ON asset_monitor_marks WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER asset_policies_fence_insert BEFORE INSERT ON asset_policies WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER asset_policies_fence_update BEFORE UPDATE ON asset_policies WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER asset_policies_fence_delete BEFORE DELETE ON asset_policies WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER audit_events_fence_insert BEFORE INSERT ON audit_events WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER audit_events_fence_update BEFORE UPDATE ON audit_events WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER audit_events_fence_delete BEFORE DELETE ON audit_events WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER dq_score_configs_fence_insert BEFORE INSERT ON dq_score_configs WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER dq_score_configs_fence_update BEFORE UPDATE ON dq_score_configs WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER dq_score_configs_fence_delete BEFORE DELETE ON dq_score_configs WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER dq_scores_fence_insert BEFORE INSERT ON dq_scores WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER dq_scores_fence_update BEFORE UPDATE ON dq_scores WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER dq_scores_fence_delete BEFORE DELETE ON dq_scores WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_backfills_fence_insert BEFORE INSERT ON incident_backfills WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_backfills_fence_update BEFORE UPDATE ON incident_backfills WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_backfills_fence_delete BEFORE DELETE ON incident_backfills WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_day_rollups_fence_insert BEFORE INSERT ON incident_day_rollups WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_day_rollups_fence_update BEFORE UPDATE ON incident_day_rollups WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_day_rollups_fence_delete BEFORE DELETE ON incident_day_rollups WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incidents_fence_insert BEFORE INSERT ON incidents WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incidents_fence_update BEFORE UPDATE ON incidents WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incidents_fence_delete BEFORE DELETE ON incidents WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_history_fence_insert BEFORE INSERT ON incident_history WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_history_fence_update BEFORE UPDATE ON incident_history WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_history_fence_delete BEFORE DELETE ON incident_history WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_rollups_fence_insert BEFORE INSERT ON incident_rollups WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_rollups_fence_update BEFORE UPDATE ON incident_rollups WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_rollups_fence_delete BEFORE DELETE ON incident_rollups WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_tag_rollups_fence_insert BEFORE INSERT ON incident_tag_rollups WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_tag_rollups_fence_update BEFORE UPDATE ON incident_tag_rollups WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER incident_tag_rollups_fence_delete BEFORE DELETE ON incident_tag_rollups WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER jira_integrations_fence_insert BEFORE INSERT ON jira_integrations WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER jira_integrations_fence_update BEFORE UPDATE ON jira_integrations WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER jira_integrations_fence_delete BEFORE DELETE ON jira_integrations WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER monitor_applied_jobs_fence_insert BEFORE INSERT ON monitor_applied_jobs WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER monitor_applied_jobs_fence_update BEFORE UPDATE ON monitor_applied_jobs WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER monitor_applied_jobs_fence_delete BEFORE DELETE ON monitor_applied_jobs WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER notification_channels_fence_insert BEFORE INSERT ON notification_channels WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER notification_channels_fence_update BEFORE UPDATE ON notification_channels WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER notification_channels_fence_delete BEFORE DELETE ON notification_channels WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER notification_deliveries_fence_insert BEFORE INSERT ON notification_deliveries WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER notification_deliveries_fence_update BEFORE UPDATE ON notification_deliveries WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER notification_deliveries_fence_delete BEFORE DELETE ON notification_deliveries WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER project_members_fence_insert BEFORE INSERT ON project_members WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER project_members_fence_update BEFORE UPDATE ON project_members WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER project_members_fence_delete BEFORE DELETE ON project_members WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER scan_jobs_fence_insert BEFORE INSERT ON scan_jobs WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER scan_jobs_fence_update BEFORE UPDATE ON scan_jobs WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER scan_jobs_fence_delete BEFORE DELETE ON scan_jobs WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER source_groups_fence_insert BEFORE INSERT ON source_groups WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER source_groups_fence_update BEFORE UPDATE ON source_groups WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER source_groups_fence_delete BEFORE DELETE ON source_groups WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER spark_job_configs_fence_insert BEFORE INSERT ON spark_job_configs WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER spark_job_configs_fence_update BEFORE UPDATE ON spark_job_configs WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER spark_job_configs_fence_delete BEFORE DELETE ON spark_job_configs WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER tenant_members_fence_insert BEFORE INSERT ON tenant_members WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER tenant_members_fence_update BEFORE UPDATE ON tenant_members WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER tenant_members_fence_delete BEFORE DELETE ON tenant_members WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER ticket_requests_fence_insert BEFORE INSERT ON ticket_requests WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER ticket_requests_fence_update BEFORE UPDATE ON ticket_requests WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER ticket_requests_fence_delete BEFORE DELETE ON ticket_requests WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER ticket_templates_fence_insert BEFORE INSERT ON ticket_templates WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER ticket_templates_fence_update BEFORE UPDATE ON ticket_templates WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') OR EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = NEW.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
--> statement-breakpoint
CREATE TRIGGER ticket_templates_fence_delete BEFORE DELETE ON ticket_templates WHEN EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_id = OLD.tenant_id AND state = 'fenced') BEGIN SELECT RAISE(ABORT, 'tenant_moving'); END;
