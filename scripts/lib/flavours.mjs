// The two flavours of the extension, made from the same extension/ files.
//   full:  manifest as written, with experiment_apis (needs a Firefox that honours experiments)
//   basic: no experiment_apis, no experiment files and no privileged permissions: what an add-on
//          store would sign
//
// The full manifest lists the privileged permission "mozillaAddons": addons-linter --privileged
// requires it next to experiment_apis, and Firefox grants it where it honours the experiment.

/** Permissions only privileged (or temporarily installed, experiment-enabled) add-ons get. */
export const PRIVILEGED_PERMISSIONS = ["mozillaAddons"];

/** Returns the manifest for `flavour` without changing `manifest`. */
export function flavourManifest(manifest, flavour) {
  if (flavour === "full") {
    return structuredClone(manifest);
  }
  if (flavour === "basic") {
    const copy = structuredClone(manifest);
    delete copy.experiment_apis;
    if (Array.isArray(copy.permissions)) {
      copy.permissions = copy.permissions.filter((p) => !PRIVILEGED_PERMISSIONS.includes(p));
    }
    return copy;
  }
  throw new Error(`unknown flavour ${JSON.stringify(flavour)}; use "full" or "basic"`);
}

/** The folders (relative, "/"-separated) holding the manifest's experiment files. */
export function experimentFolders(manifest) {
  const folders = new Set();
  for (const api of Object.values(manifest.experiment_apis ?? {})) {
    for (const file of [api.schema, api.parent?.script, api.child?.script]) {
      if (typeof file === "string") {
        const parts = file.replace(/^\.?\//, "").split("/");
        // the top folder: experiments/about-startup/parent.js -> experiments
        folders.add(parts.length > 1 ? parts[0] : parts.join("/"));
      }
    }
  }
  return [...folders].sort();
}

/** Whether a file (relative path, "/"-separated) belongs in `flavour`. */
export function includeInFlavour(relativePath, manifest, flavour) {
  if (flavour === "full") {
    return true;
  }
  return !experimentFolders(manifest).some(
    (folder) => relativePath === folder || relativePath.startsWith(`${folder}/`),
  );
}
