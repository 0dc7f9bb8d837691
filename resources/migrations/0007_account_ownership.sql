ALTER TABLE `reviews` ADD `account_id` text;--> statement-breakpoint
ALTER TABLE `reviews` ADD `client_key` text;--> statement-breakpoint
CREATE INDEX `reviews_account_idx` ON `reviews` (`account_id`,`agent_id`);--> statement-breakpoint
CREATE INDEX `reviews_client_idx` ON `reviews` (`client_key`,`agent_id`);--> statement-breakpoint
ALTER TABLE `submissions` ADD `account_id` text;--> statement-breakpoint
CREATE INDEX `submissions_account_idx` ON `submissions` (`account_id`);--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `owner_account_id` text;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `scope` text DEFAULT 'all' NOT NULL;