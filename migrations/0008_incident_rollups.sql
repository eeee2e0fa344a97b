CREATE TABLE `incident_day_rollups` (
	`tenant_id` text NOT NULL,
	`day` text NOT NULL,
	`tag` text NOT NULL,
	`severity` text NOT NULL,
	`impact` text NOT NULL,
	`total` integer NOT NULL,
	`closed` integer NOT NULL,
	`resolved` integer NOT NULL,
	`resolve_seconds` integer NOT NULL,
	`responded` integer NOT NULL,
	`response_seconds` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `day`, `tag`, `severity`, `impact`)
);
--> statement-breakpoint
CREATE TABLE `incident_rollups` (
	`tenant_id` text NOT NULL,
	`day` text NOT NULL,
	`project_id` integer NOT NULL,
	`connection_id` integer NOT NULL,
	`connection_type` text NOT NULL,
	`policy` text NOT NULL,
	`tag` text NOT NULL,
	`severity` text NOT NULL,
	`impact` text NOT NULL,
	`total` integer NOT NULL,
	`closed` integer NOT NULL,
	`resolved` integer NOT NULL,
	`resolve_seconds` integer NOT NULL,
	`responded` integer NOT NULL,
	`response_seconds` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `day`, `project_id`, `connection_id`, `connection_type`, `policy`, `tag`, `severity`, `impact`)
);
