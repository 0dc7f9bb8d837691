import type { Pinia } from 'pinia';
import type { AccountRole } from '../src-api/modules/accounts/accounts.table';
import { createRouter, createWebHashHistory, createWebHistory, type RouteRecordRaw } from 'vue-router';
import { useSessionStore } from './stores/session-store';
import { isDesktop, whenRolesChange, whenSessionEnds } from './trpc';

declare module 'vue-router' {
  interface RouteMeta {
    /** Title in the top bar and the window title. */
    title?: string;
    /** Reachable without signing in (the sign-in screen itself). */
    public?: boolean;
    /** Only for accounts with this role; a moderator on an admin screen sees "not allowed" instead. */
    role?: AccountRole;
  }
}

/** The screens, in sidebar order; those with `role: 'admin'` are for admins only (the sidebar hides them from moderators). */
export const consoleRoutes: RouteRecordRaw[] = [
  { path: '/overview', name: 'overview', component: () => import('./views/OverviewView.vue'), meta: { title: 'Overview' } },
  { path: '/submissions', name: 'submissions', component: () => import('./views/SubmissionsView.vue'), meta: { title: 'Submissions' } },
  { path: '/claims', name: 'claims', component: () => import('./views/ClaimsView.vue'), meta: { title: 'Claims' } },
  {
    path: '/edit-requests',
    name: 'edit-requests',
    component: () => import('./views/EditRequestsView.vue'),
    meta: { title: 'Edit requests' },
  },
  { path: '/reports', name: 'reports', component: () => import('./views/ReportsView.vue'), meta: { title: 'Reports' } },
  { path: '/agents', name: 'agents', component: () => import('./views/AgentsView.vue'), meta: { title: 'Agents' } },
  { path: '/marketing', name: 'marketing', component: () => import('./views/MarketingView.vue'), meta: { title: 'Marketing' } },
  { path: '/webhooks', name: 'webhooks', component: () => import('./views/WebhooksView.vue'), meta: { title: 'Webhooks', role: 'admin' } },
  { path: '/api-keys', name: 'api-keys', component: () => import('./views/ApiKeysView.vue'), meta: { title: 'API keys', role: 'admin' } },
  {
    path: '/newsletter',
    name: 'newsletter',
    component: () => import('./views/NewsletterView.vue'),
    meta: { title: 'Newsletter', role: 'admin' },
  },
  {
    path: '/audit-log',
    name: 'audit-log',
    component: () => import('./views/AuditLogView.vue'),
    meta: { title: 'Audit log', role: 'admin' },
  },
  { path: '/accounts', name: 'accounts', component: () => import('./views/AccountsView.vue'), meta: { title: 'Accounts', role: 'admin' } },
];

export function createConsoleRouter(pinia: Pinia) {
  const router = createRouter({
    // file:// (Electron) has no server to fall back to index.html, so hashes there; real paths under /console/ in a browser.
    history: isDesktop || window.location.protocol === 'file:' ? createWebHashHistory() : createWebHistory(import.meta.env.BASE_URL),
    routes: [
      { path: '/', redirect: { name: 'overview' } },
      {
        path: '/sign-in',
        name: 'sign-in',
        component: () => import('./views/SignInView.vue'),
        meta: { title: 'Sign in', public: true },
      },
      ...consoleRoutes,
      { path: '/:pathMatch(.*)*', redirect: { name: 'overview' } },
    ],
  });

  router.beforeEach(async (to) => {
    const session = useSessionStore(pinia);
    if (to.meta.public) return isDesktop ? { name: 'overview' } : true;
    if (await session.ensureSignedIn()) return true;
    return { name: 'sign-in', query: to.name === 'overview' ? {} : { redirect: to.fullPath } };
  });

  // A session refused mid-work (ended, expired, role taken away): back to sign-in, then back here.
  whenSessionEnds(() => {
    const session = useSessionStore(pinia);
    if (isDesktop || !session.isSignedIn) return;
    const current = router.currentRoute.value;
    void session.signOut();
    void router.replace({ name: 'sign-in', query: { redirect: current.fullPath, expired: '1' } });
  });

  // "Only an admin may do this" for someone the console took for an admin: the roles changed meanwhile.
  whenRolesChange(() => void useSessionStore(pinia).refresh());

  router.afterEach((to) => {
    document.title = to.meta.title ? `${to.meta.title} · Agent Directory` : 'Agent Directory';
  });

  return router;
}
