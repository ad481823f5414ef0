/**
 * The project's lint rules (flat config; the root eslint.config.mjs re-exports this). Practical rules:
 * typescript-eslint's recommended set without type information (fast, no TypeScript program), import
 * cycles refused (import-x/no-cycle), and formatting left to Prettier.
 */
import { createRequire, registerHooks } from 'node:module';
import { pathToFileURL } from 'node:url';

// typescript-eslint parses with the TypeScript 5 compiler API. The project's own `typescript` (the root
// node_modules) is TypeScript 7, which has none, and a helper of typescript-eslint (ts-api-utils) is
// hoisted next to it; so inside the lint process every import of `typescript` gets this workspace's 5.x.
const ts5 = pathToFileURL(createRequire(import.meta.url).resolve('typescript')).href;
registerHooks({
  resolve: (specifier, context, next) => (specifier === 'typescript' ? { url: ts5, shortCircuit: true } : next(specifier, context)),
});

const { default: js } = await import('@eslint/js');
const { default: tseslint } = await import('typescript-eslint');
const { default: importX } = await import('eslint-plugin-import-x');
const { default: prettier } = await import('eslint-config-prettier');
const { default: globals } = await import('globals');

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      'data/**',
      'coverage/**',
      'dist/**',
      'sdk/dist/**',
      '**/*.d.ts',
      'openapi.json',
      'sdk/src/generated/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,mts,js,mjs,cjs}'],
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module', globals: { ...globals.node } },
    plugins: { 'import-x': importX },
    settings: { 'import-x/extensions': ['.ts', '.mts', '.js', '.mjs'] },
    rules: {
      // a cycle is a layering bug: lib/ never imports services/, domains import core, not the other way
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // layers: a domain module (lib/) never imports the actor runtime, a mixin or a service
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            { target: './lib', from: ['./actors', './mixins', './services'], message: 'lib/ is below actors/, mixins/ and services/' },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { args: 'after-used', argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // the store and the broker hand out untyped JSON; `any` is kept to tests and narrow adapters
      '@typescript-eslint/no-explicit-any': 'off',
      // Moleculer's `this` in service schemas and mixins is typed by the schema, not by a class
      '@typescript-eslint/no-this-alias': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
      // errors here are rewritten for clients on purpose (never leak internals); a cause is optional
      'preserve-caught-error': 'off',
      // a `let` read by a closure before its one assignment (cleanup of a half-started resource) stays a `let`
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // one request-meta type for every facade (lib/core/request-meta.ts), not local types and casts
    files: ['services/**/*.ts', 'mixins/**/*.ts'],
    ignores: ['services/api.service.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "TSAsExpression > MemberExpression.expression[property.name='meta']",
          message: 'read ctx.meta through requestMeta(ctx) / merchantCaller(ctx) / clientHash(ctx) from lib/core/request-meta.ts',
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // code that runs in the browser (the hosted checkout page's script, the SDK's browser build)
    files: ['lib/checkout/**/*.ts', 'sdk/**/*.ts'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
  prettier,
);
