import type { Db } from '../../db/client';
import type { Clock } from '../../lib/clock';
import type { AgentsService } from '../agents/agents.service';

export interface SearchServiceDeps {
  db: Db;
  clock: Clock;
  agents: AgentsService;
}

// Skeleton: the search index is being written (issue 2).
export function createSearchService({ agents }: SearchServiceDeps) {
  return {
    indexedCount: (): number => agents.countListed(),
  };
}

export type SearchService = ReturnType<typeof createSearchService>;
