CREATE TABLE `asset_lineage` (
	`tenant_id` text NOT NULL,
	`parent_asset_id` integer NOT NULL,
	`child_asset_id` integer NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`parent_asset_id`, `child_asset_id`),
	FOREIGN KEY (`parent_asset_id`) REFERENCES `assets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`child_asset_id`) REFERENCES `assets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `asset_lineage_child_idx` ON `asset_lineage` (`child_asset_id`);--> statement-breakpoint
CREATE TABLE `assets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`project_id` integer NOT NULL,
	`connection_id` integer NOT NULL,
	`source_group_id` integer,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`type` text NOT NULL,
	`options` text NOT NULL,
	`payload` text NOT NULL,
	`db_type` text,
	`attributes` text,
	`schedule_cron` text,
	`schedule_timezone` text DEFAULT 'UTC' NOT NULL,
	`schedule_enabled` integer DEFAULT false NOT NULL,
	`next_run_at` text,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`connection_id`) REFERENCES `connections`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `assets_tenant_project_idx` ON `assets` (`tenant_id`,`project_id`,`id`);--> statement-breakpoint
CREATE INDEX `assets_tenant_connection_idx` ON `assets` (`tenant_id`,`connection_id`);--> statement-breakpoint
CREATE INDEX `assets_tenant_group_idx` ON `assets` (`tenant_id`,`source_group_id`);--> statement-breakpoint
CREATE INDEX `assets_next_run_idx` ON `assets` (`next_run_at`);--> statement-breakpoint
CREATE TABLE `scan_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`asset_id` integer NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`trigger` text NOT NULL,
	`request` text NOT NULL,
	`rows_scanned` integer DEFAULT 0 NOT NULL,
	`total_bytes` integer,
	`bytes_scanned` integer DEFAULT 0 NOT NULL,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`started_at` text,
	`finished_at` text
);
--> statement-breakpoint
CREATE INDEX `scan_jobs_tenant_asset_idx` ON `scan_jobs` (`tenant_id`,`asset_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `source_groups` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`project_id` integer NOT NULL,
	`connection_id` integer NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`options` text NOT NULL,
	`db_type` text,
	`scheduled_upload` text,
	`next_run_at` text,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`connection_id`) REFERENCES `connections`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `source_groups_tenant_project_idx` ON `source_groups` (`tenant_id`,`project_id`,`id`);--> statement-breakpoint
CREATE INDEX `source_groups_next_run_idx` ON `source_groups` (`next_run_at`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text,
	`user_email` text,
	`name` text NOT NULL,
	`prefix` text NOT NULL,
	`hash` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_uq` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE INDEX `api_keys_tenant_idx` ON `api_keys` (`tenant_id`,`id`);--> statement-breakpoint
CREATE INDEX `api_keys_user_idx` ON `api_keys` (`user_email`,`id`);--> statement-breakpoint
CREATE TABLE `connections` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`project_id` integer,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`payload` text NOT NULL,
	`db_type` text,
	`credential_type` text NOT NULL,
	`credential_secret` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `connections_tenant_project_idx` ON `connections` (`tenant_id`,`project_id`,`id`);--> statement-breakpoint
CREATE TABLE `incident_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`incident_id` integer NOT NULL,
	`time` text NOT NULL,
	`from_state` text,
	`to_state` text NOT NULL,
	`alert_refs` text NOT NULL,
	`actor` text NOT NULL,
	`note` text,
	`reason` text,
	`job_id` text,
	FOREIGN KEY (`incident_id`) REFERENCES `incidents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `incident_history_incident_idx` ON `incident_history` (`incident_id`,`time`);--> statement-breakpoint
CREATE UNIQUE INDEX `incident_history_job_uq` ON `incident_history` (`incident_id`,`job_id`);--> statement-breakpoint
CREATE TABLE `incidents` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`asset_id` integer NOT NULL,
	`project_id` integer NOT NULL,
	`connection_id` integer NOT NULL,
	`connection_type` text NOT NULL,
	`source_name` text NOT NULL,
	`policy` text NOT NULL,
	`policy_name` text NOT NULL,
	`attribute` text DEFAULT '' NOT NULL,
	`state` text NOT NULL,
	`severity` text NOT NULL,
	`impact` text NOT NULL,
	`tag` text NOT NULL,
	`alert_count` integer NOT NULL,
	`clean_scans` integer DEFAULT 0 NOT NULL,
	`opened_at` text NOT NULL,
	`last_alert_at` text NOT NULL,
	`closed_at` text,
	`close_reason` text,
	`first_response_at` text,
	`ticket_key` text,
	`ticket_url` text,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `incidents_open_uq` ON `incidents` (`tenant_id`,`asset_id`,`policy`,`attribute`) WHERE "incidents"."state" = 'OPEN';--> statement-breakpoint
CREATE INDEX `incidents_tenant_opened_idx` ON `incidents` (`tenant_id`,`opened_at`,`id`);--> statement-breakpoint
CREATE INDEX `incidents_tenant_project_opened_idx` ON `incidents` (`tenant_id`,`project_id`,`opened_at`);--> statement-breakpoint
CREATE INDEX `incidents_tenant_state_idx` ON `incidents` (`tenant_id`,`state`,`closed_at`);--> statement-breakpoint
CREATE INDEX `incidents_tenant_asset_idx` ON `incidents` (`tenant_id`,`asset_id`);--> statement-breakpoint
CREATE TABLE `jira_integrations` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`base_url` text NOT NULL,
	`email` text NOT NULL,
	`token_secret` text NOT NULL,
	`default_template_id` integer,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `ticket_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`incident_id` integer NOT NULL,
	`template_id` integer NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`ticket_key` text,
	`error` text,
	`next_attempt_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `ticket_requests_incident_idx` ON `ticket_requests` (`tenant_id`,`incident_id`);--> statement-breakpoint
CREATE INDEX `ticket_requests_due_idx` ON `ticket_requests` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE TABLE `alerts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`asset_id` integer NOT NULL,
	`project_id` integer NOT NULL,
	`connection_id` integer NOT NULL,
	`job_id` text NOT NULL,
	`type` text NOT NULL,
	`policy_name` text NOT NULL,
	`attribute` text DEFAULT '' NOT NULL,
	`priority` text NOT NULL,
	`description` text NOT NULL,
	`source_name` text NOT NULL,
	`source_type` text NOT NULL,
	`is_notification_enabled` integer NOT NULL,
	`metric` text NOT NULL,
	`metric_value` text NOT NULL,
	`metric_time` text NOT NULL,
	`create_time` text NOT NULL,
	`save_time` text NOT NULL,
	`details` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `alerts_job_type_attr_uq` ON `alerts` (`job_id`,`type`,`attribute`);--> statement-breakpoint
CREATE INDEX `alerts_tenant_job_idx` ON `alerts` (`tenant_id`,`job_id`);--> statement-breakpoint
CREATE INDEX `alerts_tenant_asset_time_idx` ON `alerts` (`tenant_id`,`asset_id`,`save_time`);--> statement-breakpoint
CREATE INDEX `alerts_tenant_time_idx` ON `alerts` (`tenant_id`,`save_time`);--> statement-breakpoint
CREATE TABLE `asset_policies` (
	`asset_id` integer PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`overrides` text NOT NULL,
	`auto_close_after` integer,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `dq_scores` (
	`job_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`asset_id` integer NOT NULL,
	`scored_at` text NOT NULL,
	`completeness` real NOT NULL,
	`accuracy` real NOT NULL,
	`consistency` real NOT NULL,
	`timeliness` real NOT NULL,
	`overall` real NOT NULL
);
--> statement-breakpoint
CREATE INDEX `dq_scores_tenant_asset_time_idx` ON `dq_scores` (`tenant_id`,`asset_id`,`scored_at`);--> statement-breakpoint
CREATE TABLE `monitor_applied_jobs` (
	`job_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`asset_id` integer NOT NULL,
	`applied_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `monitor_applied_jobs_asset_idx` ON `monitor_applied_jobs` (`tenant_id`,`asset_id`,`applied_at`);--> statement-breakpoint
CREATE TABLE `dq_score_configs` (
	`asset_id` integer PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`enabled` integer NOT NULL,
	`weights` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`asset_id`) REFERENCES `assets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `spark_job_configs` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`spark_properties` text,
	`dataproc_config` text,
	`emr_config` text,
	`databricks_config` text,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `ticket_templates` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`type` text NOT NULL,
	`props` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ticket_templates_tenant_name_uq` ON `ticket_templates` (`tenant_id`,`name`);--> statement-breakpoint
CREATE TABLE `project_members` (
	`tenant_id` text NOT NULL,
	`project_id` integer NOT NULL,
	`user_email` text NOT NULL,
	`role` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`project_id`, `user_email`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `project_members_tenant_user_idx` ON `project_members` (`tenant_id`,`user_email`);--> statement-breakpoint
CREATE TABLE `projects` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `projects_tenant_name_uq` ON `projects` (`tenant_id`,`name`);--> statement-breakpoint
CREATE TABLE `tenant_members` (
	`tenant_id` text NOT NULL,
	`user_email` text NOT NULL,
	`role` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`tenant_id`, `user_email`),
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `tenant_members_user_idx` ON `tenant_members` (`user_email`);--> statement-breakpoint
CREATE TABLE `tenants` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`storage` text,
	`storage_secret` text,
	`data_ttl` integer NOT NULL,
	`free_upload_limit` integer NOT NULL,
	`use_information_schema` integer DEFAULT false NOT NULL,
	`dataproc_config` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
