CREATE TABLE `reports` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`reason` text NOT NULL,
	`details` text,
	`contact_email` text,
	`client_key` text NOT NULL,
	`account_id` text,
	`status` text DEFAULT 'open' NOT NULL,
	`resolution` text,
	`resolution_reason` text,
	`decided_by` text,
	`decided_at` text,
	`version` integer DEFAULT 1 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `reports_status_created_idx` ON `reports` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `reports_agent_status_idx` ON `reports` (`agent_id`,`status`);--> statement-breakpoint
CREATE INDEX `reports_agent_client_idx` ON `reports` (`agent_id`,`client_key`,`status`);--> statement-breakpoint
CREATE TABLE `edit_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_id` text NOT NULL,
	`account_id` text NOT NULL,
	`changes` text NOT NULL,
	`before` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`reason` text,
	`decided_by` text,
	`decided_at` text,
	`version` integer DEFAULT 1 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `edit_requests_status_created_idx` ON `edit_requests` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `edit_requests_agent_idx` ON `edit_requests` (`agent_id`);--> statement-breakpoint
CREATE TABLE `review_replies` (
	`id` text PRIMARY KEY NOT NULL,
	`review_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`account_id` text NOT NULL,
	`body` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`review_id`) REFERENCES `reviews`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `review_replies_review_id_unique` ON `review_replies` (`review_id`);--> statement-breakpoint
CREATE INDEX `review_replies_agent_idx` ON `review_replies` (`agent_id`);--> statement-breakpoint
ALTER TABLE `agents` ADD `status` text DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE `agents` ADD `status_message` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `owner_account_id` text;--> statement-breakpoint
CREATE INDEX `agents_owner_idx` ON `agents` (`owner_account_id`);--> statement-breakpoint
ALTER TABLE `claims` ADD `methods` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `claims` ADD `verified_method` text;--> statement-breakpoint
ALTER TABLE `claims` ADD `account_id` text;--> statement-breakpoint
ALTER TABLE `claims` ADD `client_key` text;--> statement-breakpoint
ALTER TABLE `claims` ADD `next_recheck_at` text;--> statement-breakpoint
ALTER TABLE `claims` ADD `recheck_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `claims_recheck_idx` ON `claims` (`status`,`next_recheck_at`);--> statement-breakpoint
CREATE INDEX `claims_client_status_idx` ON `claims` (`client_key`,`status`);--> statement-breakpoint
CREATE INDEX `claims_account_idx` ON `claims` (`account_id`);