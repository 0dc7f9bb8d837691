import type { ApiRoutes } from '../../http/routes';

// Skeleton: routes of this module are being written (issue 2).
export const searchRoutes: ApiRoutes = async () => {};
