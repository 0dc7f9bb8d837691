import { z } from 'zod';
import { AGENT_TYPES } from '../agents/agents.schemas';

/** How many UTC days the console's activity series covers, today included. */
export const ACTIVITY_WINDOW_DAYS = 30;

export const directoryStatsSchema = z
  .object({
    total_agents: z.number().int().describe('Listed agents'),
    verified_agents: z.number().int().describe('Listed agents whose ownership is verified'),
    types: z.array(z.enum(AGENT_TYPES)).describe('Every agent type the directory knows, in documentation order'),
    by_type: z.record(z.string(), z.number().int()).describe('Listed agents per type; every type is present, zeros included'),
    by_category: z
      .record(z.string(), z.number().int())
      .describe('Listed agents per category (an agent counts once in each of its categories), largest first'),
    reviews: z.object({
      count: z.number().int().describe('Visible reviews of listed agents'),
      average_rating: z.number().nullable().describe('Mean rating of those reviews, two decimals; null when there are none'),
    }),
  })
  .meta({ id: 'DirectoryStats' });
export type DirectoryStats = z.infer<typeof directoryStatsSchema>;

export interface ActivityDay {
  /** UTC day, YYYY-MM-DD. */
  date: string;
  submissions: number;
  reviews: number;
  agents: number;
}

/** The console's dashboard: queues to work on and recent activity. */
export interface ModeratorOverview {
  pending_submissions: number;
  pending_claims: number;
  /** The last 30 UTC days, oldest first, zeros included. */
  activity: ActivityDay[];
}
