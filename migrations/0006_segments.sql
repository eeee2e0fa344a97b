DROP INDEX `alerts_job_type_attr_uq`;--> statement-breakpoint
ALTER TABLE `alerts` ADD `segment` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `alerts_job_type_attr_segment_uq` ON `alerts` (`job_id`,`type`,`attribute`,`segment`);--> statement-breakpoint
DROP INDEX `incidents_open_uq`;--> statement-breakpoint
ALTER TABLE `incidents` ADD `segment` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `incidents_open_uq` ON `incidents` (`tenant_id`,`asset_id`,`policy`,`attribute`,`segment`) WHERE "incidents"."state" = 'OPEN';