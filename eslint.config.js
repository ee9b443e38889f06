import js from "@eslint/js";
import globals from "globals";
import noUnsanitized from "eslint-plugin-no-unsanitized";

export default [
  {
    ignores: ["node_modules/", "dist/", "artifacts/", "native-host/target/", "web-ext-artifacts/"],
  },
  js.configs.recommended,
  noUnsanitized.configs.recommended,
  {
    files: ["extension/**/*.js"],
    languageOptions: {
      sourceType: "module",
      globals: { ...globals.browser, ...globals.webextensions },
    },
  },
  {
    // Parent-process experiment scripts: classic scripts in Firefox's privileged sandbox.
    files: ["extension/experiments/**/*.js"],
    languageOptions: {
      sourceType: "script",
      globals: { ExtensionAPI: "readonly", Services: "readonly", ChromeUtils: "readonly" },
    },
  },
  {
    files: ["**/*.mjs", "scripts/**/*.js", "tests/**/*.js", "*.js"],
    languageOptions: {
      sourceType: "module",
      globals: { ...globals.node },
    },
  },
  {
    // Functions the profile maker runs in Firefox's parent process (and, pageMarks, in a page).
    files: ["scripts/profile/in-firefox.mjs"],
    languageOptions: {
      globals: { ...globals.browser, Services: "readonly", ChromeUtils: "readonly", Cc: "readonly", Ci: "readonly", WebExtensionPolicy: "readonly" },
    },
  },
  {
    // Functions the e2e tests run inside Firefox (executeScript) see browser globals.
    files: ["tests/e2e/**/*.js"],
    languageOptions: {
      globals: { ...globals.browser, gBrowser: "readonly", Services: "readonly" },
    },
  },
];
