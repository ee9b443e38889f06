// The one mode detection: which mode the add-on runs in ("full" with the aboutStartup experiment
// API, which only the full flavour declares, else "basic"), the API itself, and whether
// about:startup is this add-on's page. Looked up at run time so the same code works in both
// flavours. Pure: the WebExtension API comes in as a parameter.

export const FULL = "full";
export const BASIC = "basic";

/** The aboutStartup experiment API of `browserApi`, or null when Firefox did not load it. */
export function startupApi(browserApi) {
  const api = browserApi?.aboutStartup;
  return typeof api?.getStartupInfo === "function" ? api : null;
}

/** `api` is what startupApi() returned: the experiment API, or null. */
export function detectMode(api) {
  return typeof api?.getStartupInfo === "function" ? FULL : BASIC;
}

/** The mode of `browserApi`: detectMode(startupApi(browserApi)). */
export function modeOf(browserApi) {
  return detectMode(startupApi(browserApi));
}

/** Whether about:startup is this extension's page: only the experiment (full flavour) knows. */
export async function isAboutRegistered(browserApi) {
  const status = browserApi?.aboutStartup?.status;
  if (typeof status !== "function") {
    return false;
  }
  try {
    return (await status()).ours === true;
  } catch {
    return false;
  }
}
