import { createPinia } from 'pinia';
import { createApp } from 'vue';
import '../styles.css';
import App from './App.vue';
import { createDashboardRouter } from './router';

const pinia = createPinia();
const router = createDashboardRouter(pinia);
const app = createApp(App).use(pinia).use(router);

// Mount once the first route (possibly the sign-in redirect) is settled, so no screen flashes.
void router.isReady().then(() => app.mount('#app'));
