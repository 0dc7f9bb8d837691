ALTER TABLE `newsletter_subscribers` ADD `confirmed_at` text;--> statement-breakpoint
ALTER TABLE `newsletter_subscribers` ADD `unsubscribed_at` text;