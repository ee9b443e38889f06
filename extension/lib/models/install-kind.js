// The one line the page shows about the kind of install the host serves (hello's
// `install_kind`, docs/PROTOCOL.md): which kind, and what that kind gets from the host. Pure:
// words through `t(key, subs)`, so the unit tests see which message was chosen.
import { compressedText } from "../wording/compressed-text.js";

/** The kind's name. */
export const INSTALL_KIND_KEYS = {
  distribution: "installKindDistribution",
  tarball: "installKindTarball",
  snap: "installKindSnap",
  flatpak: "installKindFlatpak",
};

/**
 * "Distribution package (firefox-esr): residency exact only as root; …" for `installKind` (or
 * null: no install known), given hello's `euid` and `root`.
 */
export function installKindText(installKind, hello, t) {
  const nameKey = INSTALL_KIND_KEYS[installKind?.kind];
  if (!nameKey) {
    return t("installKindUnknown");
  }
  const name = installKind.package ? `${t(nameKey)} (${installKind.package})` : t(nameKey);
  const line = t("installKindLine", [name, installGets(installKind, hello, t)]);
  const compressed = compressedText(installKind.compressed, t);
  return compressed ? `${line}. ${compressed}` : line;
}

/** What the kind gets: for a Snap its two caches, else whether residency is exact. */
function installGets(installKind, hello, t) {
  if (installKind.kind === "snap") {
    const image = installKind.image;
    if (!image) {
      return t("installGetsSnapNoImage");
    }
    return image.direct_io
      ? t("installGetsSnapDirectIo", [image.image])
      : t("installGetsSnapTwoCaches", [image.image]);
  }
  if (hello?.root) {
    return t("installGetsExactRoot");
  }
  if (installKind.owner_uid != null && installKind.owner_uid === hello?.euid) {
    return t("installGetsExactOwner");
  }
  return t("installGetsHidden");
}

/**
 * hello's `firefox_found.how` when the parent is not Firefox, worded from the codes and numbers
 * beside it (`candidates`, `pids`), never from its English `detail`.
 */
export const FIREFOX_FOUND_KEYS = {
  matched: "firefoxFoundMatchedPid",
  no_hint: "firefoxFoundNoHintWords",
  no_match: "firefoxFoundNoMatchCount",
  ambiguous: "firefoxFoundAmbiguousPids",
};

/**
 * The same for a host older than `pids`: its English `detail` is shown, since for `matched` and
 * `ambiguous` nothing else names the processes.
 */
export const FIREFOX_FOUND_DETAIL_KEYS = {
  matched: "firefoxFoundMatched",
  ambiguous: "firefoxFoundAmbiguous",
};

const pidList = (pids) => new Intl.ListFormat(undefined, { style: "short", type: "unit" }).format(pids.map(String));

/**
 * The line saying how the host found the Firefox it serves when its parent is not Firefox (a
 * Snap or Flatpak starts hosts through the desktop portal), or null when it is the parent (or
 * an older host said nothing).
 */
export function firefoxFoundText(found, t) {
  const how = found?.how;
  const key = FIREFOX_FOUND_KEYS[how];
  if (!key) {
    return null;
  }
  const pids = Array.isArray(found.pids) ? found.pids.filter(Number.isInteger) : null;
  if (how === "no_hint") {
    return t(key);
  }
  if (how === "no_match" && Number.isInteger(found.candidates)) {
    return t(key, [String(found.candidates)]);
  }
  if (how === "matched" && pids?.length === 1) {
    return t(key, [String(pids[0])]);
  }
  if (how === "ambiguous" && pids?.length > 1) {
    return t(key, [pidList(pids)]);
  }
  return t(FIREFOX_FOUND_DETAIL_KEYS[how] ?? "firefoxFoundNoMatch", [found.detail ?? "—"]);
}
