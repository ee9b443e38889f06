// What the host does on an install on a compressed mount (a Snap, a packed Firefox;
// firefox/compressed/ in the host; `compressed` in hello's `install_kind`, in `desktop`'s record
// and in a planned preload's reply, docs/PROTOCOL.md), in words: one wording for the page's
// install line and its planned preload. Pure: words through `t(key, subs)`.

/** The compressed formats' names (hello's `install_kind.compressed.format`). */
export const COMPRESSED_FORMATS = {
  squashfs: "squashfs",
  erofs: "EROFS",
  squashfuse: "squashfuse (squashfs)",
  erofsfuse: "erofsfuse (EROFS)",
};

/** Why a prefetch is left off on a compressed mount, by `left_off` code. */
export const LEFT_OFF_KEYS = {
  image_not_readable: "compressedWhyNotReadable",
  no_image: "compressedWhyNoImage",
  image_refused: "compressedWhyRefused",
  direct_io: "compressedWhyDirectIo",
  no_block_map: "compressedWhyNoBlockMap",
  no_rdsquashfs: "compressedWhyNoRdsquashfs",
};

/**
 * For an install on a compressed mount (a Snap, a packed Firefox; firefox/compressed/): what
 * the prefetch and the login preload do there, or null for a plain install (or an older host).
 */
export function compressedText(compressed, t) {
  if (!compressed?.format) {
    return null;
  }
  const format = COMPRESSED_FORMATS[compressed.format] ?? compressed.format;
  if (compressed.verdict === "image_ranges") {
    return t("compressedImageRanges", [format, compressed.image ?? "—"]);
  }
  const why = LEFT_OFF_KEYS[compressed.left_off];
  return t("compressedLeftOff", [format, why ? t(why) : (compressed.left_off ?? "—")]);
}

