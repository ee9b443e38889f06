import { test } from "node:test";
import assert from "node:assert/strict";
import { userJs, withoutPrefs } from "../../../../scripts/lib/prefs-js.mjs";

test("user.js: one user_pref line per pref, values as JSON", () => {
  assert.equal(userJs({ "a.b": true, "c.d": 0, "e.f": "ignore" }), 'user_pref("a.b", true);\nuser_pref("c.d", 0);\nuser_pref("e.f", "ignore");\n');
});

test("withoutPrefs drops exactly the named prefs' lines from a prefs.js", () => {
  const prefsJs = ['// Mozilla User Preferences', 'user_pref("marionette.port", 0);', 'user_pref("marionette.port.extra", 1);', 'user_pref("browser.startup.page", 3);', ""].join("\n");
  assert.equal(withoutPrefs(prefsJs, ["marionette.port"]), ['// Mozilla User Preferences', 'user_pref("marionette.port.extra", 1);', 'user_pref("browser.startup.page", 3);', ""].join("\n"));
});
