// "Open in the Firefox Profiler" (issue 21): the profile fetched in pages from the host, and the
// Profiler's from-post-message handshake (docs-developer/loading-in-profiles.md), against fakes
// of the host and of the Profiler's window shaped like the real ones.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fetchProfile, injectProfile, PROFILER_ORIGIN } from "../../../extension/page/profiler.js";

test("the profile comes back page by page until next_offset is null", async () => {
  const text = '{"meta":{"version":34},"threads":[]}';
  const asked = [];
  const request = async (command, { trace, offset }) => {
    asked.push([command, trace, offset]);
    const next = offset + 10 < text.length ? offset + 10 : null;
    return { id: trace, offset, total: text.length, next_offset: next, data: text.slice(offset, offset + 10) };
  };
  assert.equal(await fetchProfile(request, "1-2-3"), text);
  assert.deepEqual(asked[0], ["trace_profile_fetch", "1-2-3", 0]);
  assert.equal(asked.length, Math.ceil(text.length / 10));
});

/** A Profiler window that answers `is-ready` after `readyAfter` posts, from its own origin. */
function fakeProfiler(readyAfter, origin = PROFILER_ORIGIN) {
  const posted = [];
  let handler = null;
  const target = {
    postMessage(data, targetOrigin) {
      posted.push({ data, targetOrigin });
      if (data.name === "is-ready" && posted.filter((p) => p.data.name === "is-ready").length === readyAfter) {
        setTimeout(() => handler?.({ origin, source: target, data: { name: "is-ready" } }), 0);
      }
    },
  };
  return {
    posted,
    opened: [],
    open(url) {
      this.opened.push(url);
      return target;
    },
    listen(h) {
      handler = h;
      return () => (handler = null);
    },
  };
}

test("is-ready is posted until the Profiler answers, then the profile is injected, to its origin only", async () => {
  const w = fakeProfiler(3);
  const profile = { meta: { version: 34 } };
  const result = await injectProfile(profile, { open: (u) => w.open(u), listen: (h) => w.listen(h), every: 5, timeoutMs: 2000 });
  assert.equal(result, "injected");
  assert.deepEqual(w.opened, [`${PROFILER_ORIGIN}/from-post-message/`]);
  assert.equal(w.posted.filter((p) => p.data.name === "is-ready").length, 3);
  const inject = w.posted.find((p) => p.data.name === "inject-profile");
  assert.equal(inject.data.profile, profile);
  assert.ok(w.posted.every((p) => p.targetOrigin === PROFILER_ORIGIN), "never posted to another origin");
});

test("an answer from another origin is ignored, a Profiler that never answers times out, a blocked tab is said", async () => {
  const spoof = fakeProfiler(1, "https://evil.example");
  assert.equal(await injectProfile({}, { open: (u) => spoof.open(u), listen: (h) => spoof.listen(h), every: 5, timeoutMs: 100 }), "timeout");
  assert.ok(!spoof.posted.some((p) => p.data.name === "inject-profile"), "the profile went nowhere");
  const silent = fakeProfiler(Infinity);
  assert.equal(await injectProfile({}, { open: (u) => silent.open(u), listen: (h) => silent.listen(h), every: 5, timeoutMs: 60 }), "timeout");
  assert.equal(await injectProfile({}, { open: () => null, listen: () => () => {} }), "blocked");
});
