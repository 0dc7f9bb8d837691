import type { Services } from '../services';

// Skeleton: the demo directory generator is being written (issue 2).
export function seedDemoDirectory(_services: Services): { agents: number } {
  return { agents: 0 };
}
