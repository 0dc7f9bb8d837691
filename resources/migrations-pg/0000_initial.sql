CREATE TABLE "agents" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"tagline" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"author" text DEFAULT '' NOT NULL,
	"capabilities" json DEFAULT '[]'::json NOT NULL,
	"categories" json DEFAULT '[]'::json NOT NULL,
	"type" text NOT NULL,
	"source_url" text NOT NULL,
	"source_url_key" text NOT NULL,
	"verified" boolean DEFAULT false NOT NULL,
	"listed" boolean DEFAULT true NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"status_message" text,
	"owner_account_id" text,
	"owner_name" text,
	"agent_card_url" text,
	"skills" json,
	"agent_card_etag" text,
	"agent_card_fetched_at" text,
	"trust_score" double precision DEFAULT 0 NOT NULL,
	"rating_count" bigint DEFAULT 0 NOT NULL,
	"rating_sum" bigint DEFAULT 0 NOT NULL,
	"version" bigint DEFAULT 1 NOT NULL,
	"change_seq" bigint DEFAULT 0 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reviews" (
	"id" text PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"rating" bigint NOT NULL,
	"comment" text,
	"reviewer_name" text,
	"hidden" boolean DEFAULT false NOT NULL,
	"account_id" text,
	"client_key" text,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "submissions" (
	"id" text PRIMARY KEY NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"name" text NOT NULL,
	"tagline" text NOT NULL,
	"source_url" text NOT NULL,
	"source_url_key" text NOT NULL,
	"description" text,
	"author" text,
	"capabilities" json,
	"categories" json,
	"type" text,
	"contact_email" text,
	"agent_card_url" text,
	"skills" json,
	"agent_card_etag" text,
	"agent_id" text,
	"reason" text,
	"decided_by" text,
	"decided_at" text,
	"version" bigint DEFAULT 1 NOT NULL,
	"account_id" text,
	"client_key" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "claims" (
	"id" text PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"claimant_name" text NOT NULL,
	"claimant_email" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"token" text NOT NULL,
	"verification_url" text NOT NULL,
	"methods" json DEFAULT '[]'::json NOT NULL,
	"verified_method" text,
	"account_id" text,
	"client_key" text,
	"next_recheck_at" text,
	"recheck_failures" bigint DEFAULT 0 NOT NULL,
	"last_check" json,
	"verified_by" text,
	"reason" text,
	"version" bigint DEFAULT 1 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	"decided_at" text
);
--> statement-breakpoint
CREATE TABLE "newsletter_subscribers" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"email_key" text NOT NULL,
	"status" text DEFAULT 'subscribed' NOT NULL,
	"created_at" text NOT NULL,
	"confirmed_at" text,
	"unsubscribed_at" text
);
--> statement-breakpoint
CREATE TABLE "ab_test_variants" (
	"id" text PRIMARY KEY NOT NULL,
	"ab_test_id" text NOT NULL,
	"label" text NOT NULL,
	"post_id" text NOT NULL,
	"impressions" bigint DEFAULT 0 NOT NULL,
	"conversions" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ab_tests" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"created_at" text NOT NULL,
	"completed_at" text
);
--> statement-breakpoint
CREATE TABLE "marketing_posts" (
	"id" text PRIMARY KEY NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"tone" text NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"channel" text NOT NULL,
	"agent_id" text,
	"source_event_id" text,
	"source_event_type" text,
	"version" bigint DEFAULT 1 NOT NULL,
	"created_at" text NOT NULL,
	"published_at" text
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"key_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"created_at" text NOT NULL,
	"revoked_at" text,
	"last_used_at" text,
	"account_id" text
);
--> statement-breakpoint
CREATE TABLE "key_usage_daily" (
	"key_id" text NOT NULL,
	"day" text NOT NULL,
	"requests" bigint DEFAULT 0 NOT NULL,
	"rate_limited" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"data" json NOT NULL,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"id" text PRIMARY KEY NOT NULL,
	"delivery_id" text NOT NULL,
	"attempt_number" bigint NOT NULL,
	"request_headers" json NOT NULL,
	"request_body" text NOT NULL,
	"status_code" bigint,
	"latency_ms" bigint,
	"response_excerpt" text,
	"error" text,
	"started_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"event_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempt_count" bigint DEFAULT 0 NOT NULL,
	"next_attempt_at" text,
	"lease_owner" text,
	"lease_expires_at" text,
	"is_test" boolean DEFAULT false NOT NULL,
	"last_status_code" bigint,
	"last_error" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"events" json DEFAULT '[]'::json NOT NULL,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_expires_at" text,
	"description" text DEFAULT '' NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"disabled_reason" text,
	"consecutive_failures" bigint DEFAULT 0 NOT NULL,
	"version" bigint DEFAULT 1 NOT NULL,
	"owner_account_id" text,
	"scope" text DEFAULT 'all' NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" text PRIMARY KEY NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"entity_type" text NOT NULL,
	"entity_id" text NOT NULL,
	"before" json,
	"after" json,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mail_outbox" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"to_address" text NOT NULL,
	"subject" text NOT NULL,
	"text_body" text NOT NULL,
	"html_body" text NOT NULL,
	"headers" json DEFAULT '{}'::json NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempt_count" bigint DEFAULT 0 NOT NULL,
	"next_attempt_at" text NOT NULL,
	"lease_owner" text,
	"lease_expires_at" text,
	"last_error" text,
	"delivered_to" text,
	"sent_at" text,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"email_key" text NOT NULL,
	"name" text NOT NULL,
	"password_hash" text,
	"email_verified_at" text,
	"roles" json DEFAULT '[]'::json NOT NULL,
	"disabled_at" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "one_time_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"purpose" text NOT NULL,
	"subject_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"expires_at" text NOT NULL,
	"used_at" text,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" text NOT NULL,
	"last_seen_at" text NOT NULL,
	"expires_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reports" (
	"id" text PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"reason" text NOT NULL,
	"details" text,
	"contact_email" text,
	"client_key" text NOT NULL,
	"account_id" text,
	"status" text DEFAULT 'open' NOT NULL,
	"resolution" text,
	"resolution_reason" text,
	"decided_by" text,
	"decided_at" text,
	"version" bigint DEFAULT 1 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "edit_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"account_id" text NOT NULL,
	"changes" json NOT NULL,
	"before" json NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"reason" text,
	"decided_by" text,
	"decided_at" text,
	"version" bigint DEFAULT 1 NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "review_replies" (
	"id" text PRIMARY KEY NOT NULL,
	"review_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"account_id" text NOT NULL,
	"body" text NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "review_replies_review_id_unique" UNIQUE("review_id")
);
--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "claims" ADD CONSTRAINT "claims_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ab_test_variants" ADD CONSTRAINT "ab_test_variants_ab_test_id_ab_tests_id_fk" FOREIGN KEY ("ab_test_id") REFERENCES "public"."ab_tests"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ab_test_variants" ADD CONSTRAINT "ab_test_variants_post_id_marketing_posts_id_fk" FOREIGN KEY ("post_id") REFERENCES "public"."marketing_posts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reports" ADD CONSTRAINT "reports_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "edit_requests" ADD CONSTRAINT "edit_requests_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_replies" ADD CONSTRAINT "review_replies_review_id_reviews_id_fk" FOREIGN KEY ("review_id") REFERENCES "public"."reviews"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_replies" ADD CONSTRAINT "review_replies_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agents_change_seq_idx" ON "agents" USING btree ("change_seq");--> statement-breakpoint
CREATE INDEX "agents_source_url_key_idx" ON "agents" USING btree ("source_url_key");--> statement-breakpoint
CREATE INDEX "agents_owner_idx" ON "agents" USING btree ("owner_account_id");--> statement-breakpoint
CREATE INDEX "agents_list_trust_idx" ON "agents" USING btree ("listed","trust_score","id");--> statement-breakpoint
CREATE INDEX "agents_list_name_idx" ON "agents" USING btree ("listed","name","id");--> statement-breakpoint
CREATE INDEX "agents_list_created_idx" ON "agents" USING btree ("listed","created_at","id");--> statement-breakpoint
CREATE INDEX "agents_list_updated_idx" ON "agents" USING btree ("listed","updated_at","id");--> statement-breakpoint
CREATE INDEX "agents_list_type_trust_idx" ON "agents" USING btree ("listed","type","trust_score","id");--> statement-breakpoint
CREATE INDEX "agents_list_type_name_idx" ON "agents" USING btree ("listed","type","name","id");--> statement-breakpoint
CREATE INDEX "agents_list_type_created_idx" ON "agents" USING btree ("listed","type","created_at","id");--> statement-breakpoint
CREATE INDEX "agents_list_type_updated_idx" ON "agents" USING btree ("listed","type","updated_at","id");--> statement-breakpoint
CREATE INDEX "reviews_agent_created_idx" ON "reviews" USING btree ("agent_id","created_at");--> statement-breakpoint
CREATE INDEX "reviews_created_idx" ON "reviews" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "reviews_account_idx" ON "reviews" USING btree ("account_id","agent_id");--> statement-breakpoint
CREATE INDEX "reviews_client_idx" ON "reviews" USING btree ("client_key","agent_id");--> statement-breakpoint
CREATE INDEX "submissions_status_created_idx" ON "submissions" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "submissions_source_url_key_idx" ON "submissions" USING btree ("source_url_key");--> statement-breakpoint
CREATE INDEX "submissions_account_idx" ON "submissions" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "submissions_client_status_idx" ON "submissions" USING btree ("client_key","status");--> statement-breakpoint
CREATE INDEX "claims_status_created_idx" ON "claims" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "claims_agent_idx" ON "claims" USING btree ("agent_id");--> statement-breakpoint
CREATE INDEX "claims_recheck_idx" ON "claims" USING btree ("status","next_recheck_at");--> statement-breakpoint
CREATE INDEX "claims_client_status_idx" ON "claims" USING btree ("client_key","status");--> statement-breakpoint
CREATE INDEX "claims_account_idx" ON "claims" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "newsletter_email_key_idx" ON "newsletter_subscribers" USING btree ("email_key");--> statement-breakpoint
CREATE INDEX "ab_test_variants_test_idx" ON "ab_test_variants" USING btree ("ab_test_id");--> statement-breakpoint
CREATE INDEX "marketing_posts_status_idx" ON "marketing_posts" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "marketing_posts_tone_idx" ON "marketing_posts" USING btree ("tone");--> statement-breakpoint
CREATE INDEX "marketing_posts_published_idx" ON "marketing_posts" USING btree ("published_at");--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_idx" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_account_idx" ON "api_keys" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "key_usage_daily_key_day_idx" ON "key_usage_daily" USING btree ("key_id","day");--> statement-breakpoint
CREATE INDEX "events_created_idx" ON "events" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "events_type_idx" ON "events" USING btree ("type","created_at");--> statement-breakpoint
CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" USING btree ("delivery_id","attempt_number");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_due_idx" ON "webhook_deliveries" USING btree ("endpoint_id","status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "audit_created_idx" ON "audit_log" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "audit_entity_idx" ON "audit_log" USING btree ("entity_type","entity_id");--> statement-breakpoint
CREATE INDEX "mail_outbox_due_idx" ON "mail_outbox" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_email_key_idx" ON "accounts" USING btree ("email_key");--> statement-breakpoint
CREATE UNIQUE INDEX "one_time_tokens_hash_idx" ON "one_time_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "one_time_tokens_subject_idx" ON "one_time_tokens" USING btree ("subject_id");--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_token_hash_idx" ON "sessions" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "sessions_account_idx" ON "sessions" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "reports_status_created_idx" ON "reports" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "reports_agent_status_idx" ON "reports" USING btree ("agent_id","status");--> statement-breakpoint
CREATE INDEX "reports_agent_client_idx" ON "reports" USING btree ("agent_id","client_key","status");--> statement-breakpoint
CREATE INDEX "edit_requests_status_created_idx" ON "edit_requests" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "edit_requests_agent_idx" ON "edit_requests" USING btree ("agent_id");--> statement-breakpoint
CREATE INDEX "review_replies_agent_idx" ON "review_replies" USING btree ("agent_id");