CREATE TABLE `asset_monitor_marks` (
	`asset_id` integer PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`last_job_id` text NOT NULL,
	`applied_at` text NOT NULL,
	`freshness` text
);
