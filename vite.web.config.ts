import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

/**
 * The console for the browser, served by `npm run serve` at /console from
 * out/web. `npm run dev:web` serves it with hot reload and forwards /trpc to
 * a server started with `npm run serve` on the default port.
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
  },
  server: {
    proxy: { '/trpc': 'http://127.0.0.1:8787' },
  },
});
