import { resolve } from 'node:path';
import { defineConfig } from 'vite';

/**
 * The headless server and the CLI as plain JavaScript: out/api/serve.js and
 * out/api/cli.js, run by `npm run serve` and `npm run cli`. Running the
 * TypeScript through tsx instead costs its loader (~46 MB RSS and up to a
 * second of start-up). An SSR build targets Node and keeps every dependency
 * external, loaded from node_modules (better-sqlite3 is native and must be);
 * only our own src-api code is bundled.
 */
export default defineConfig({
  build: {
    ssr: true,
    outDir: resolve('out/api'),
    emptyOutDir: true,
    target: 'node20',
    // The server runs where it is built: no minifying, and stack traces point at readable code.
    minify: false,
    reportCompressedSize: false,
    rolldownOptions: {
      input: { serve: resolve('src-api/serve.ts'), cli: resolve('src-api/cli.ts') },
      output: { format: 'esm', entryFileNames: '[name].js', chunkFileNames: 'chunks/[name]-[hash].js' },
    },
  },
});
