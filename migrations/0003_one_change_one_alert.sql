ALTER TABLE `incident_history` ADD `details` text;--> statement-breakpoint
ALTER TABLE `incidents` ADD `level_scans` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `incidents` ADD `deviation` real;--> statement-breakpoint
ALTER TABLE `asset_policies` ADD `adapt_after` integer;--> statement-breakpoint
ALTER TABLE `asset_policies` ADD `attribute_kinds` text;