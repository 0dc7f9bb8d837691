import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

/**
 * The web build: the console (index.html) and the developer dashboard
 * (dashboard/index.html), two Vue apps sharing components and one set of
 * assets under /console/assets. `npm run serve` serves them at /console and
 * /dashboard from out/web. `npm run dev:web` serves them with hot reload
 * (at /console/ and /console/dashboard/) and forwards /trpc and /api to a
 * server started with `npm run serve` on the default port.
 */
export default defineConfig({
  root: fileURLToPath(new URL('./src-renderer', import.meta.url)),
  base: '/console/',
  plugins: [vue()],
  build: {
    outDir: fileURLToPath(new URL('./out/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1500,
    rollupOptions: {
      input: {
        console: fileURLToPath(new URL('./src-renderer/index.html', import.meta.url)),
        dashboard: fileURLToPath(new URL('./src-renderer/dashboard/index.html', import.meta.url)),
      },
    },
  },
  server: {
    proxy: { '/trpc': 'http://127.0.0.1:8787', '/api': 'http://127.0.0.1:8787' },
  },
});
