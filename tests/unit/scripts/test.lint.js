import { test } from "node:test";
import assert from "node:assert/strict";
import { acceptedWarning } from "../../../scripts/lint.mjs";

test("web-ext lint: only the Firefox for Android minimum of data_collection_permissions is accepted", () => {
  const android = {
    code: "KEY_FIREFOX_ANDROID_UNSUPPORTED_BY_MIN_VERSION",
    message: "Manifest key not supported by the specified minimum Firefox for Android version",
    description: '"strict_min_version" requires Firefox for Android 140, which was released before version 142 introduced support for "browser_specific_settings.gecko.data_collection_permissions".',
  };
  assert.equal(acceptedWarning(android), true);
  // the desktop one (a strict_min_version below 140) is not
  assert.equal(acceptedWarning({ ...android, code: "KEY_FIREFOX_UNSUPPORTED_BY_MIN_VERSION" }), false);
  // nor the same code for another key
  assert.equal(acceptedWarning({ ...android, description: android.description.replace("data_collection_permissions", "omnibox") }), false);
  assert.equal(acceptedWarning({ code: "MANIFEST_FIELD_UNSUPPORTED", message: "", description: "" }), false);
  assert.equal(acceptedWarning(null), false);
});
