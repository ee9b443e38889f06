import { test } from "node:test";
import assert from "node:assert/strict";
import { asUser, withoutDacOverride } from "../../../../scripts/lib/users.mjs";

test("asUser switches ids through setpriv, and runs one's own uid as it is", () => {
  assert.deepEqual(asUser(65534, ["id"], { self: 0 }), ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "id"]);
  assert.deepEqual(asUser(0, ["id"], { self: 0 }), ["id"]);
});

test("withoutDacOverride drops both read-anything capabilities from the bounding and inheritable sets", () => {
  // The bounding set, so that nothing the command execs gets them back (checked by hand: root
  // then gets EACCES on a 0600 file of nobody's).
  assert.deepEqual(withoutDacOverride(["firefox", "-headless"]), [
    "setpriv",
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
    "--",
    "firefox",
    "-headless",
  ]);
});
