// Firefox's pref files as text: user.js written from an object, and prefs.js with some prefs
// left out. The benchmark and the profile maker both write profiles Firefox then starts. Pure.

/** user.js text for `prefs`: one user_pref line each, values as JSON. */
export function userJs(prefs) {
  return `${Object.entries(prefs)
    .map(([name, value]) => `user_pref(${JSON.stringify(name)}, ${JSON.stringify(value)});`)
    .join("\n")}\n`;
}

/** prefs.js text without the lines of `names`. */
export function withoutPrefs(prefsJs, names) {
  return prefsJs
    .split("\n")
    .filter((line) => !names.some((name) => line.startsWith(`user_pref(${JSON.stringify(name)},`)))
    .join("\n");
}
