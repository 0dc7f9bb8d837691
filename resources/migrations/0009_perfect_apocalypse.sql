ALTER TABLE `agents` ADD `agent_card_url` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `skills` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `agent_card_etag` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `agent_card_fetched_at` text;--> statement-breakpoint
ALTER TABLE `submissions` ADD `agent_card_url` text;--> statement-breakpoint
ALTER TABLE `submissions` ADD `skills` text;--> statement-breakpoint
ALTER TABLE `submissions` ADD `agent_card_etag` text;