-- Written by hand (drizzle-kit generate --custom): drizzle's schema has no triggers.
-- Every statement on agents notifies agentdir_agents_changed when its transaction commits, so readers in
-- every process know max(change_seq) may have moved without reading it (modules/agents/agent-changes.ts).
-- No payload: the notifications of one transaction fold into one.
CREATE FUNCTION "agents_changed_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('agentdir_agents_changed', '');
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "agents_changed_notify" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "agents"
  FOR EACH STATEMENT EXECUTE FUNCTION "agents_changed_notify"();
