-- sort=rating as an index walk (trust-score.ts ratingSortSql). Corrected by hand: drizzle-kit 0.31 writes a SQLite index expression's parts as quoted column names.
CREATE INDEX `agents_list_rating_desc_idx` ON `agents` (`listed`,coalesce(CASE WHEN "rating_count" = 0 THEN NULL ELSE (CAST("rating_sum" AS REAL) + 15) / ("rating_count" + 5) END, 0),`id`,`type`);--> statement-breakpoint
CREATE INDEX `agents_list_rating_asc_idx` ON `agents` (`listed`,coalesce(CASE WHEN "rating_count" = 0 THEN NULL ELSE (CAST("rating_sum" AS REAL) + 15) / ("rating_count" + 5) END, 6),`id`,`type`);
