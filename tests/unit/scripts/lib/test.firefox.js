import { test } from "node:test";
import assert from "node:assert/strict";
import { findFirefox, findGeckodriver, FirefoxNotFoundError } from "../../../../scripts/lib/firefox.mjs";

const only = (...paths) => (p) => paths.includes(p);

test("FIREFOX wins over PATH", () => {
  const env = { FIREFOX: "/opt/ff/firefox", PATH: "/usr/bin" };
  assert.equal(findFirefox({ env, isExecutable: only("/opt/ff/firefox", "/usr/bin/firefox") }), "/opt/ff/firefox");
});

test("a FIREFOX that is not executable is an error, not a silent fallback", () => {
  const env = { FIREFOX: "/nope", PATH: "/usr/bin" };
  assert.throws(() => findFirefox({ env, isExecutable: only("/usr/bin/firefox") }), /FIREFOX=\/nope/);
});

test("names are tried in order: firefox before firefox-esr before the others", () => {
  const env = { PATH: "/a:/b" };
  assert.equal(findFirefox({ env, isExecutable: only("/b/firefox-esr", "/a/firefox-nightly") }), "/b/firefox-esr");
  assert.equal(findFirefox({ env, isExecutable: only("/b/firefox", "/a/firefox-esr") }), "/b/firefox");
  assert.equal(
    findFirefox({ env, isExecutable: only("/a/firefox-developer-edition") }),
    "/a/firefox-developer-edition",
  );
});

test("none found: says what to install", () => {
  assert.throws(
    () => findFirefox({ env: { PATH: "/a" }, isExecutable: () => false }),
    (error) => error instanceof FirefoxNotFoundError && /apt-get install firefox-esr/.test(error.message),
  );
});

test("geckodriver: GECKODRIVER, then PATH, then ~/.cargo/bin", () => {
  assert.equal(findGeckodriver({ env: { GECKODRIVER: "/x/gd", PATH: "/a" }, isExecutable: only("/x/gd") }), "/x/gd");
  assert.equal(findGeckodriver({ env: { PATH: "/a", HOME: "/h" }, isExecutable: only("/a/geckodriver") }), "/a/geckodriver");
  assert.equal(
    findGeckodriver({ env: { PATH: "/a", HOME: "/h" }, isExecutable: only("/h/.cargo/bin/geckodriver") }),
    "/h/.cargo/bin/geckodriver",
  );
  assert.equal(findGeckodriver({ env: { PATH: "/a" }, isExecutable: () => false }), null);
});
