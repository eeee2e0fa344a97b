CREATE TABLE `audit_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`at` text NOT NULL,
	`actor` text NOT NULL,
	`credential` text NOT NULL,
	`method` text NOT NULL,
	`route` text NOT NULL,
	`path` text NOT NULL,
	`status` integer NOT NULL,
	`request_id` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_events_tenant_at_idx` ON `audit_events` (`tenant_id`,`at`,`id`);--> statement-breakpoint
CREATE TABLE `notification_channels` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`url` text NOT NULL,
	`url_secret` text NOT NULL,
	`signing_secret` text,
	`events` text NOT NULL,
	`min_severity` text NOT NULL,
	`project_ids` text NOT NULL,
	`enabled` integer NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_channels_tenant_name_uq` ON `notification_channels` (`tenant_id`,`name`);--> statement-breakpoint
CREATE TABLE `notification_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`channel_id` integer NOT NULL,
	`event_key` text NOT NULL,
	`event` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_status_code` integer,
	`last_error` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`channel_id`) REFERENCES `notification_channels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_deliveries_event_uq` ON `notification_deliveries` (`channel_id`,`event_key`);--> statement-breakpoint
CREATE INDEX `notification_deliveries_channel_idx` ON `notification_deliveries` (`tenant_id`,`channel_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `created_by_email` text;--> statement-breakpoint
ALTER TABLE `asset_policies` ADD `notify` integer;