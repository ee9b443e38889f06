import { test } from "node:test";
import assert from "node:assert/strict";
import { firefoxFoundText, installKindText } from "../../../../extension/lib/models/install-kind.js";
import { englishMessage } from "../../fakes.js";

// Words as "key[subs]" so the test sees which message and values were chosen.
const t = (key, subs = []) => (subs.length ? `${key}[${subs.join("|")}]` : key);
const user = { euid: 1000, root: false };
const root = { euid: 0, root: true };

test("a package: hidden for a user, exact as root, the package named", () => {
  const debian = { kind: "distribution", reason: "dpkg", package: "firefox-esr", owner_uid: 0, image: null };
  assert.equal(installKindText(debian, user, t), "installKindLine[installKindDistribution (firefox-esr)|installGetsHidden]");
  assert.equal(installKindText(debian, root, t), "installKindLine[installKindDistribution (firefox-esr)|installGetsExactRoot]");
});

test("a tarball the user owns is exact without root; another user's is hidden", () => {
  const mine = { kind: "tarball", reason: "user_folder", package: null, owner_uid: 1000, image: null };
  assert.equal(installKindText(mine, user, t), "installKindLine[installKindTarball|installGetsExactOwner]");
  assert.equal(installKindText({ ...mine, owner_uid: 1001 }, user, t), "installKindLine[installKindTarball|installGetsHidden]");
});

test("a Snap names its image and its two caches, or that the image is read with direct I/O", () => {
  const image = { loop_device: "/dev/loop0", image: "/var/lib/snapd/snaps/firefox_1.snap", direct_io: false };
  const snap = { kind: "snap", reason: "snap_path", package: null, owner_uid: 0, image };
  assert.equal(installKindText(snap, user, t), "installKindLine[installKindSnap|installGetsSnapTwoCaches[/var/lib/snapd/snaps/firefox_1.snap]]");
  const dio = { ...snap, image: { ...image, direct_io: true } };
  assert.match(installKindText(dio, user, t), /installGetsSnapDirectIo/);
  assert.match(installKindText({ ...snap, image: null }, user, t), /installGetsSnapNoImage/);
});

test("a Flatpak, and no install at all", () => {
  assert.match(installKindText({ kind: "flatpak", owner_uid: 0 }, user, t), /installKindFlatpak\|installGetsHidden/);
  assert.equal(installKindText(null, user, t), "installKindUnknown");
  assert.equal(installKindText({ kind: "rpm-ostree" }, user, t), "installKindUnknown");
});

test("how the host found Firefox is said only when it is not the parent", () => {
  assert.equal(firefoxFoundText({ how: "parent", detail: null }, t), null);
  assert.equal(firefoxFoundText(undefined, t), null);
  // worded from the code and its numbers; the English detail is not shown
  assert.equal(firefoxFoundText({ how: "matched", detail: "process 7 matched build 1", candidates: 1, pids: [7] }, t), "firefoxFoundMatchedPid[7]");
  assert.equal(firefoxFoundText({ how: "no_match", detail: "none of your 0", candidates: 0, pids: [] }, t), "firefoxFoundNoMatchCount[0]");
  assert.match(firefoxFoundText({ how: "ambiguous", detail: "x", candidates: 3, pids: [100, 400] }, t), /^firefoxFoundAmbiguousPids\[100.*400\]$/);
  assert.equal(firefoxFoundText({ how: "no_hint", detail: "the host's parent …", candidates: null, pids: [] }, t), "firefoxFoundNoHintWords");
});

test("a host older than pids: its English detail only where nothing else names the processes", () => {
  assert.equal(firefoxFoundText({ how: "matched", detail: "process 7 matched build 1", candidates: 1 }, t), "firefoxFoundMatched[process 7 matched build 1]");
  assert.equal(firefoxFoundText({ how: "ambiguous", detail: "x", candidates: 2 }, t), "firefoxFoundAmbiguous[x]");
  // candidates came before pids: enough to word no_match
  assert.equal(firefoxFoundText({ how: "no_match", detail: "none of your 2", candidates: 2 }, t), "firefoxFoundNoMatchCount[2]");
  assert.equal(firefoxFoundText({ how: "no_match", detail: "none" }, t), "firefoxFoundNoMatch[none]");
  assert.equal(firefoxFoundText({ how: "no_hint", detail: "x" }, t), "firefoxFoundNoHintWords");
});

test("every firefox_found key is in messages.json, worded in English", () => {
  const english = (key, subs) => englishMessage(key, subs);
  assert.match(firefoxFoundText({ how: "ambiguous", candidates: 2, pids: [100, 400] }, english), /^not told apart: processes 100.*400 all have/);
  assert.match(firefoxFoundText({ how: "matched", candidates: 1, pids: [4242] }, english), /process 4242 has this Firefox's version and build/);
  assert.match(firefoxFoundText({ how: "no_match", candidates: 0, pids: [] }, english), /looked at: 0;/);
  assert.match(firefoxFoundText({ how: "no_hint", pids: [] }, english), /^not found: /);
});

test("a compressed install says what the prefetch does there: its image's ranges, or left off and why", () => {
  const image = { loop_device: "/dev/loop0", image: "/var/lib/snapd/snaps/firefox_1.snap", direct_io: false };
  const snap = { kind: "snap", reason: "snap_path", package: null, owner_uid: 0, image };
  const leftOff = { format: "squashfs", mount_point: "/snap/firefox/1", image: image.image, access: { code: "not_readable" }, verdict: "left_off", left_off: "image_not_readable" };
  assert.equal(
    installKindText({ ...snap, compressed: leftOff }, user, t),
    "installKindLine[installKindSnap|installGetsSnapTwoCaches[/var/lib/snapd/snaps/firefox_1.snap]]. compressedLeftOff[squashfs|compressedWhyNotReadable]",
  );
  const readable = { ...leftOff, access: { code: "readable" }, verdict: "image_ranges", left_off: undefined };
  assert.match(installKindText({ ...snap, compressed: readable }, root, t), /\. compressedImageRanges\[squashfs\|\/var\/lib\/snapd\/snaps\/firefox_1\.snap\]$/);
  // A packed Firefox on squashfuse is a tarball or package by owner, compressed all the same.
  const packed = { kind: "tarball", reason: "user_folder", owner_uid: 1000, image: null, compressed: { ...readable, format: "squashfuse" } };
  assert.match(installKindText(packed, user, t), /compressedImageRanges\[squashfuse \(squashfs\)\|/);
  // An older host (no `compressed`): the line as before.
  assert.doesNotMatch(installKindText(snap, user, t), /compressed/);
});

test("every left-off reason is in messages.json, and the Snap's sentence reads as the CLI's", () => {
  const english = (key, subs) => englishMessage(key, subs);
  const snap = { kind: "snap", reason: "squashfs_mount", owner_uid: 0, image: null, compressed: { format: "squashfs", verdict: "left_off", left_off: "image_not_readable" } };
  assert.match(
    installKindText(snap, user, english),
    /this install is on a compressed squashfs mount: a prefetch through the mount would decompress on its one decompressor, and you may not read its image \(a Snap's is root's, mode 0600\); left off$/,
  );
  for (const code of ["no_image", "image_refused", "direct_io", "no_block_map", "no_rdsquashfs"]) {
    const text = installKindText({ ...snap, compressed: { ...snap.compressed, left_off: code } }, user, english);
    assert.doesNotMatch(text, /compressedWhy|undefined/, code);
  }
});
