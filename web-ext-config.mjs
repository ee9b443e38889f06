// Defaults for the web-ext CLI (npx web-ext run|lint|build). The scripts in scripts/ call web-ext's
// node API with explicit options and do not read this file.
export default {
  sourceDir: "extension/",
  artifactsDir: "dist/",
  ignoreFiles: ["**/*.md", "**/.*"],
  run: {
    pref: ["extensions.experiments.enabled=true"],
  },
  lint: {
    privileged: true,
  },
};
