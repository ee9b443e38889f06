/* Parent-process side of the aboutStartup experiment API.
 * Loaded by Firefox as a plain script (not a module) in a privileged sandbox
 * that provides ExtensionAPI and Services. */
"use strict";

/**
 * Turns Services.startup.getStartupInfo()'s {name: Date} into {name: ms since epoch}.
 * A milestone that is not a valid, positive time is left out: missing stays missing, never 0.
 */
function milestonesFromStartupInfo(info) {
  const out = {};
  for (const [name, value] of Object.entries(info ?? {})) {
    const ms = value != null && typeof value.getTime === "function" ? value.getTime() : Number.NaN;
    if (Number.isFinite(ms) && ms > 0) {
      out[name] = ms;
    }
  }
  return out;
}

this.aboutStartup = class extends ExtensionAPI {
  getAPI() {
    return {
      aboutStartup: {
        async getStartupInfo() {
          return milestonesFromStartupInfo(Services.startup.getStartupInfo());
        },
      },
    };
  }
};
