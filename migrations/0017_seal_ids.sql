ALTER TABLE `connections` ADD `seal_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `connections_seal_id_uq` ON `connections` (`seal_id`);--> statement-breakpoint
ALTER TABLE `notification_channels` ADD `seal_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `notification_channels_seal_id_uq` ON `notification_channels` (`seal_id`);