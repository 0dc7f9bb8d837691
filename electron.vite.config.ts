import { resolve } from 'node:path';
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'electron-vite';

/**
 * The desktop build: out/main (the shell, which runs the API in-process),
 * out/preload (bundled to one CommonJS file: a sandboxed preload can require
 * nothing but `electron`) and out/renderer (the console, loaded from file://).
 * The same console for the browser is built by vite.web.config.ts.
 */
export default defineConfig({
  main: {
    // Dependencies (fastify, better-sqlite3, …) stay external and load from node_modules.
    build: {
      rolldownOptions: { input: { index: resolve('src-main/index.ts') } },
    },
  },
  preload: {
    build: {
      externalizeDeps: false,
      rolldownOptions: {
        input: { index: resolve('src-main/preload.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: 'src-renderer',
    plugins: [vue()],
    build: {
      rolldownOptions: { input: resolve('src-renderer/index.html') },
    },
  },
});
