import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../../src-api/trpc/root';

type Outputs = inferRouterOutputs<AppRouter>['audit'];
export type AuditEntry = Outputs['list']['entries'][number];
export type AuditFacets = Outputs['facets'];

/** The log's filters as the screen holds them (and mirrors in the URL). */
export interface AuditFilterValues {
  actor: string | null;
  action: string | null;
  entityType: string | null;
  /** Part of an entity id. */
  q: string;
  /** [from, to] in epoch milliseconds, as the date picker gives them. */
  range: [number, number] | null;
}

export const emptyFilters = (): AuditFilterValues => ({ actor: null, action: null, entityType: null, q: '', range: null });
