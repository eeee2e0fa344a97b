ALTER TABLE `scan_jobs` ADD `engine` text DEFAULT 'WORKER' NOT NULL;--> statement-breakpoint
ALTER TABLE `scan_jobs` ADD `engine_reason` text;--> statement-breakpoint
ALTER TABLE `scan_jobs` ADD `provider` text;--> statement-breakpoint
ALTER TABLE `scan_jobs` ADD `provider_run_id` text;--> statement-breakpoint
ALTER TABLE `scan_jobs` ADD `provider_run_url` text;--> statement-breakpoint
ALTER TABLE `scan_jobs` ADD `provider_state` text;--> statement-breakpoint
ALTER TABLE `scan_jobs` ADD `callback_secret` text;--> statement-breakpoint
ALTER TABLE `scan_jobs` ADD `callback_used_at` text;--> statement-breakpoint
ALTER TABLE `scan_jobs` ADD `callback_deadline` text;--> statement-breakpoint
CREATE INDEX `scan_jobs_spark_running_idx` ON `scan_jobs` (`status`,`engine`) WHERE "scan_jobs"."provider_run_id" is not null;--> statement-breakpoint
ALTER TABLE `spark_job_configs` ADD `full_scan_threshold_bytes` integer;