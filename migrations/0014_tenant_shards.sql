CREATE TABLE `shard_leases` (
	`shard` integer PRIMARY KEY NOT NULL,
	`base` integer NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `tenant_fences` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`state` text NOT NULL,
	`since` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `tenant_moves` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`from_shard` integer NOT NULL,
	`to_shard` integer NOT NULL,
	`step` text NOT NULL,
	`table_index` integer DEFAULT 0 NOT NULL,
	`after_key` text,
	`copied` integer DEFAULT 0 NOT NULL,
	`flipped_at` text,
	`started_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `tenant_shards` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`shard` integer NOT NULL,
	`updated_at` text NOT NULL
);
