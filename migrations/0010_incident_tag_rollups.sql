CREATE TABLE `incident_tag_rollups` (
	`tenant_id` text NOT NULL,
	`day` text NOT NULL,
	`tag` text NOT NULL,
	`total` integer NOT NULL,
	`closed` integer NOT NULL,
	`resolved` integer NOT NULL,
	`resolve_seconds` integer NOT NULL,
	`responded` integer NOT NULL,
	`response_seconds` integer NOT NULL,
	`severity_low` integer NOT NULL,
	`severity_medium` integer NOT NULL,
	`severity_high` integer NOT NULL,
	`impact_low` integer NOT NULL,
	`impact_medium` integer NOT NULL,
	`impact_high` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `day`, `tag`)
);
