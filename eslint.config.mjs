// The lint rules live with their tools in tools/lint (a workspace: typescript-eslint needs TypeScript 5).
export { default } from './tools/lint/eslint.config.mjs';
