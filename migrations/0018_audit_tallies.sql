ALTER TABLE `audit_events` ADD `count` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `last_at` text;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `tally` text;--> statement-breakpoint
CREATE UNIQUE INDEX `audit_events_tally_uq` ON `audit_events` (`tenant_id`,`tally`) WHERE "audit_events"."tally" is not null;