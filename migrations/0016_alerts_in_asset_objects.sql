ALTER TABLE `incident_history` ADD `alert_metrics` text;--> statement-breakpoint
ALTER TABLE `asset_monitor_marks` ADD `last_alert_at` text;