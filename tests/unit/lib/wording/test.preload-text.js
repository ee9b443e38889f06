import { test } from "node:test";
import assert from "node:assert/strict";
import { endedAtText, preloadDoneText } from "../../../../extension/lib/wording/preload-text.js";
import { formatDateTime, formatTime } from "../../../../extension/lib/wording/format.js";
import { recordedReply } from "../../host-replies.js";
import { englishMessage } from "../../fakes.js";

// Words as "key[subs]" so the test sees which message and figures were chosen.
const t = (key, subs = []) => `${key}[${subs.join("|")}]`;
const result = { bytes: 308_400_000, files: 40, elapsed_ms: 9800, mb_per_s: 31.5, method: "read" };

test("page and popup word a preload with the same figures; the popup without the method", () => {
  assert.equal(preloadDoneText(result, t, {}), "residencyPreloadDone[308.4 MB|40|9,800 ms|31.5 MB/s|read]");
  assert.equal(preloadDoneText(result, t, { short: true }), "popupPreloadDone[308.4 MB|40|9,800 ms|31.5 MB/s]");
});

test("a planned preload says what the plan named; failed files are counted", () => {
  // The host's real reply (tests/fixtures/host/preload-plan-exact.json, as root after a cold
  // start): 170 files, 585,728 bytes read in 23 ms; its plan named 322,221,984 bytes, of which
  // 28,387,925 of system libraries, against an install folder of 308,445,657 bytes.
  const planned = recordedReply("preload-plan-exact").reply;
  assert.equal(
    preloadDoneText(planned, t, { short: true }),
    "popupPreloadDone[0.6 MB|170|23 ms|24.9 MB/s] planPreloadDonePlanned[293.8 MB|95%|308.4 MB|28.4 MB|disk]",
  );
  const failed = { ...planned, errors: [{}, {}] };
  assert.match(preloadDoneText(failed, t, { short: true }), / residencyPreloadErrors\[2\]$/);
  // a host older than the split: the total, said as install and system together
  const old = { ...planned, bytes_planned_system: undefined };
  assert.equal(preloadDoneText(old, t, { short: true }), "popupPreloadDone[0.6 MB|170|23 ms|24.9 MB/s] planPreloadDonePlannedTotal[322.2 MB|disk]");
  assert.match(preloadDoneText(null, t), /^residencyPreloadDone\[—\|—\|—\|—\|—\]$/);
});

test("the folder's part of a plan is set against the folder; system libraries and the profile apart (issue 39 #10)", () => {
  // 193.5 MB planned, 29.2 MB of system libraries and 6.5 MB of the profile outside the folder:
  // the folder's part is the host's bytes_planned_install, 157.8 MB of its 308.4 MB.
  const planned = {
    ...result,
    planned: true,
    order: "disk",
    bytes_planned: 193_500_000,
    bytes_planned_system: 29_200_000,
    bytes_planned_profile: 6_500_000,
    bytes_planned_install: 157_800_000,
    bytes_install: 308_400_000,
  };
  const text = "popupPreloadDone[308.4 MB|40|9,800 ms|31.5 MB/s] planPreloadDonePlannedProfile[157.8 MB|51%|308.4 MB|29.2 MB|disk|6.5 MB]";
  assert.equal(preloadDoneText(planned, t, { short: true }), text);
  // a host without bytes_planned_install: the same sum, the profile not counted as the folder's
  assert.equal(preloadDoneText({ ...planned, bytes_planned_install: undefined }, t, { short: true }), text);
});

test("one file and one failure take the One forms (tn)", () => {
  const one = { ...result, files: 1, errors: [{}] };
  assert.equal(preloadDoneText(one, t, { short: true }), "popupPreloadDoneOne[308.4 MB|1|9,800 ms|31.5 MB/s] residencyPreloadErrorsOne[1]");
  assert.match(preloadDoneText(one, t), /^residencyPreloadDoneOne\[/);
});

test("a finished preload says when it ended: the time that day, the date too on another day", () => {
  const endedAt = new Date(2026, 10, 23, 8, 4, 5).getTime(); // local time, so "that day" holds in any zone
  const text = "popupPreloadDone[308.4 MB]";
  assert.equal(endedAtText(text, endedAt, t, { now: endedAt + 60_000 }), `popupPreloadEndedAt[${formatTime(endedAt)}|${text}]`);
  assert.equal(endedAtText(text, endedAt, t, { now: endedAt + 3 * 86_400_000 }), `popupPreloadEndedAt[${formatDateTime(endedAt)}|${text}]`);
  assert.match(formatTime(endedAt, "en-US"), /^08:04:05$/, "the one 24-hour clock");
  // no end time known (an operation from an older background): the text alone, never a "—" time
  assert.equal(endedAtText(text, null, t), text);
  assert.equal(endedAtText(text, undefined, t), text);
});

test("a planned preload of an install on a compressed mount says what the host did there, from the reply's compressed", () => {
  // The reply as the host's preload_summary makes it (native-host/src/learn/prefetch/image/mod.rs,
  // its test of a Snap whose image this user may not read): nothing read, cache "image", the
  // install's compressed object with its verdict and reason, bytes_planned null.
  const snap = {
    method: "read",
    files: 0,
    bytes: 0,
    elapsed_ms: 0,
    mb_per_s: null,
    planned: true,
    idle: true,
    cache: "image",
    bytes_planned: null,
    compressed: {
      format: "squashfs",
      mount_point: "/snap/firefox/5000",
      image: "/var/lib/snapd/snaps/firefox_5000.snap",
      access: { code: "not_readable" },
      verdict: "left_off",
      left_off: "image_not_readable",
    },
  };
  assert.equal(preloadDoneText(snap, t), "planPreloadCompressedLeftOff[compressedLeftOff[squashfs|compressedWhyNotReadable[]]]");
  assert.equal(preloadDoneText(snap, t, { short: true }), preloadDoneText(snap, t), "the popup says the same");
  // In English, as the page shows it.
  assert.equal(
    preloadDoneText(snap, englishMessage),
    "Nothing preloaded: this install is on a compressed squashfs mount: a prefetch through the mount would decompress on its one decompressor, and you may not read its image (a Snap's is root's, mode 0600); left off.",
  );
  // A readable image (a packed Firefox): the image's bytes read raw, and what the plan maps to.
  const packed = {
    ...snap,
    files: 12,
    bytes: 78_816_355,
    elapsed_ms: 2680,
    mb_per_s: 29.4,
    bytes_planned: 78_816_355,
    compressed: { ...snap.compressed, mount_point: "/m", image: "/s/pack/firefox.squashfs", access: { code: "readable" }, verdict: "image_ranges", left_off: null },
  };
  assert.equal(
    preloadDoneText(packed, t),
    "residencyPreloadDone[78.8 MB|12|2,680 ms|29.4 MB/s|read] planPreloadCompressedImage[compressedImageRanges[squashfs|/s/pack/firefox.squashfs]|78.8 MB]",
  );
  // A plain install's reply (no compressed) keeps its plan's words; a preload not planned never
  // speaks of the image even where the reply carries one.
  assert.doesNotMatch(preloadDoneText(recordedReply("preload-plan-exact").reply, t), /Compressed/);
  assert.doesNotMatch(preloadDoneText({ ...packed, planned: false }, t), /Compressed/);
});
