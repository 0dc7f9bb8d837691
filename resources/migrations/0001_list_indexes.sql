DROP INDEX `agents_listed_trust_idx`;--> statement-breakpoint
DROP INDEX `agents_listed_name_idx`;--> statement-breakpoint
DROP INDEX `agents_listed_created_idx`;--> statement-breakpoint
DROP INDEX `agents_listed_updated_idx`;--> statement-breakpoint
DROP INDEX `agents_listed_type_idx`;--> statement-breakpoint
CREATE INDEX `agents_list_trust_idx` ON `agents` (`listed`,`trust_score`,`id`);--> statement-breakpoint
CREATE INDEX `agents_list_name_idx` ON `agents` (`listed`,`name`,`id`);--> statement-breakpoint
CREATE INDEX `agents_list_created_idx` ON `agents` (`listed`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `agents_list_updated_idx` ON `agents` (`listed`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `agents_list_type_trust_idx` ON `agents` (`listed`,`type`,`trust_score`,`id`);--> statement-breakpoint
CREATE INDEX `agents_list_type_name_idx` ON `agents` (`listed`,`type`,`name`,`id`);--> statement-breakpoint
CREATE INDEX `agents_list_type_created_idx` ON `agents` (`listed`,`type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `agents_list_type_updated_idx` ON `agents` (`listed`,`type`,`updated_at`,`id`);