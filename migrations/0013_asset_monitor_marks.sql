CREATE TABLE `asset_monitor_marks` (
	`asset_id` integer PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`last_job_id` text,
	`applied_at` text,
	`freshness` text,
	`moved_steps` integer DEFAULT 0 NOT NULL
);
