// eslint over the dashboard's page (js/), its unit tests (test/) and the browser launcher.
// `npm run lint` runs it with prettier's check; CTest runs both (DashboardWeb.*).
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['node_modules/'] },
  js.configs.recommended,
  { files: ['js/**/*.js'], languageOptions: { globals: globals.browser } },
  // ECharts is a classic script loaded before the modules. Only js/charts.js declares its global, so
  // no-undef keeps every other module off it.
  { files: ['js/charts.js'], languageOptions: { globals: { echarts: 'readonly' } } },
  { files: ['test/**/*.js', 'eslint.config.js', 'chromium.mjs'], languageOptions: { globals: globals.node } },
  {
    rules: {
      eqeqeq: 'error',
      'no-var': 'error',
      'prefer-const': 'error',
      'no-unused-vars': ['error', { args: 'after-used' }],
    },
  },
];
