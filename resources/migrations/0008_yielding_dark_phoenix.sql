ALTER TABLE `submissions` ADD `client_key` text;--> statement-breakpoint
CREATE INDEX `submissions_client_status_idx` ON `submissions` (`client_key`,`status`);