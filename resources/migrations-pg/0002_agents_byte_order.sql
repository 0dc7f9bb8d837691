ALTER TABLE "agents" ALTER COLUMN "id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "agents" ALTER COLUMN "name" SET DATA TYPE text COLLATE "C";