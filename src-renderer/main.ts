import { createPinia } from 'pinia';
import { createApp } from 'vue';
import App from './App.vue';
import { createConsoleRouter } from './router';
import './styles.css';

const pinia = createPinia();
const router = createConsoleRouter(pinia);
const app = createApp(App).use(pinia).use(router);

// Mount once the first route (possibly the sign-in redirect) is settled, so no screen flashes.
void router.isReady().then(() => app.mount('#app'));
