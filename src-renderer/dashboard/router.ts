import type { Pinia } from 'pinia';
import { createRouter, createWebHistory, type RouteRecordRaw } from 'vue-router';
import { useAccountStore } from './stores/account-store';

declare module 'vue-router' {
  interface RouteMeta {
    /** Title in the top bar and the window title. */
    title?: string;
    /** Reachable without signing in (sign-up, sign-in, links from mails). */
    public?: boolean;
  }
}

/** The signed-in screens, in sidebar order. */
export const dashboardRoutes: RouteRecordRaw[] = [
  { path: '/keys', name: 'keys', component: () => import('./views/KeysView.vue'), meta: { title: 'API keys' } },
  { path: '/webhooks', name: 'webhooks', component: () => import('./views/WebhooksView.vue'), meta: { title: 'Webhooks' } },
  { path: '/claims', name: 'claims', component: () => import('./views/ClaimsView.vue'), meta: { title: 'Claims' } },
  { path: '/agents', name: 'agents', component: () => import('./views/AgentsView.vue'), meta: { title: 'Your agents' } },
  { path: '/settings', name: 'settings', component: () => import('./views/SettingsView.vue'), meta: { title: 'Account' } },
];

const publicRoutes: RouteRecordRaw[] = [
  { path: '/sign-in', name: 'sign-in', component: () => import('./views/SignInView.vue'), meta: { title: 'Sign in', public: true } },
  {
    path: '/sign-up',
    name: 'sign-up',
    component: () => import('./views/SignUpView.vue'),
    meta: { title: 'Create an account', public: true },
  },
  {
    path: '/verify-email',
    name: 'verify-email',
    component: () => import('./views/VerifyEmailView.vue'),
    meta: { title: 'Verify your e-mail', public: true },
  },
  {
    path: '/forgot-password',
    name: 'forgot-password',
    component: () => import('./views/ForgotPasswordView.vue'),
    meta: { title: 'Reset your password', public: true },
  },
  {
    path: '/reset-password',
    name: 'reset-password',
    component: () => import('./views/ResetPasswordView.vue'),
    meta: { title: 'Choose a new password', public: true },
  },
  // The links of newsletter mails: for readers, who need no account.
  {
    path: '/newsletter/confirm',
    name: 'newsletter-confirm',
    component: () => import('./views/NewsletterConfirmView.vue'),
    meta: { title: 'Confirm your subscription', public: true },
  },
  {
    path: '/newsletter/unsubscribe',
    name: 'newsletter-unsubscribe',
    component: () => import('./views/NewsletterUnsubscribeView.vue'),
    meta: { title: 'Unsubscribe', public: true },
  },
];

/** Pages a signed-in person is sent away from (to the keys). */
const SIGNED_OUT_ONLY = new Set(['sign-in', 'sign-up']);

export function createDashboardRouter(pinia: Pinia) {
  const router = createRouter({
    // Served at /dashboard by `serve`, under the console's base by the dev server: take whichever the page is at,
    // rather than the build mode (a build is not always made in production mode).
    history: createWebHistory(
      window.location.pathname.startsWith(`${import.meta.env.BASE_URL}dashboard`) ? `${import.meta.env.BASE_URL}dashboard/` : '/dashboard/',
    ),
    routes: [
      { path: '/', redirect: { name: 'keys' } },
      ...publicRoutes,
      { path: '/webhooks/:id', name: 'webhook', component: () => import('./views/WebhookView.vue'), meta: { title: 'Webhooks' } },
      ...dashboardRoutes,
      { path: '/:pathMatch(.*)*', redirect: { name: 'keys' } },
    ],
  });

  router.beforeEach(async (to) => {
    const account = useAccountStore(pinia);
    const signedIn = await account.ensureLoaded();
    if (to.meta.public) return signedIn && SIGNED_OUT_ONLY.has(String(to.name)) ? { name: 'keys' } : true;
    if (signedIn) return true;
    return { name: 'sign-in', query: to.name === 'keys' ? {} : { redirect: to.fullPath } };
  });

  router.afterEach((to) => {
    document.title = to.meta.title ? `${to.meta.title} · Agent Directory` : 'Agent Directory';
  });

  return router;
}
