// Which mode the add-on runs in: "full" with the aboutStartup experiment API, else "basic".

export const FULL = "full";
export const BASIC = "basic";

/** `api` is what startupApi() returned: the experiment API, or null. */
export function detectMode(api) {
  return typeof api?.getStartupInfo === "function" ? FULL : BASIC;
}
