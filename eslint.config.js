import js from '@eslint/js';
import eslintConfigPrettier from 'eslint-config-prettier/flat';
import pluginVue from 'eslint-plugin-vue';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', 'out', 'dist', 'data', 'resources', 'clients/**/build', 'test-results', 'playwright-report'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // The console's single-file components: Vue's recommended rules, with TypeScript in <script lang="ts">.
  ...pluginVue.configs['flat/recommended'],
  {
    files: ['**/*.vue'],
    languageOptions: { parserOptions: { parser: tseslint.parser }, globals: globals.browser },
  },
  // Layout is Prettier's job: no formatting rules from ESLint.
  eslintConfigPrettier,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Only src-main may import electron; src-api must stay free of electron and vue.
      'no-restricted-imports': 'off',
    },
  },
  {
    // Scripts and configs run under plain Node.
    files: ['**/*.mjs', '**/*.js', 'scripts/**', 'bench/**', 'test/**'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['src-api/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: ['electron', 'vue'], patterns: ['electron/*', 'vue/*', '@vue/*'] }],
    },
  },
);
