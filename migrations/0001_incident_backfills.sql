CREATE TABLE `incident_backfills` (
	`tenant_id` text NOT NULL,
	`id` text NOT NULL,
	`status` text NOT NULL,
	`since` text NOT NULL,
	`until` text NOT NULL,
	`requested_by` text NOT NULL,
	`started_at` text NOT NULL,
	`finished_at` text,
	`assets_total` integer,
	`assets_done` integer DEFAULT 0 NOT NULL,
	`incidents` integer DEFAULT 0 NOT NULL,
	`alerts` integer DEFAULT 0 NOT NULL,
	`errors` text NOT NULL,
	`after_asset_id` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`tenant_id`, `id`),
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
