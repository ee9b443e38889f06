// Favicon images for the realistic profile: a 32×32 PNG per site, in the site's colour with a
// seeded pattern, so each icon is distinct and about as large as a real site's PNG favicon
// (1–3 KB; assumed). Encoded by pngjs. Pure.
import pngjs from "pngjs";
import { stream } from "./random.mjs";

export const ICON_SIZE = 32;

/** The PNG bytes of the icon in `color` (0xRRGGBB), its pattern drawn from `seed`. */
export function iconPng(color, seed) {
  const r = stream(seed, `icon-${color}`);
  const png = new pngjs.PNG({ width: ICON_SIZE, height: ICON_SIZE });
  const base = [(color >> 16) & 0xff, (color >> 8) & 0xff, color & 0xff];
  for (let y = 0; y < ICON_SIZE; y++) {
    for (let x = 0; x < ICON_SIZE; x++) {
      const i = (y * ICON_SIZE + x) * 4;
      // A round badge with a noisy fill, transparent corners: what most favicons look like.
      const dx = x - 15.5;
      const dy = y - 15.5;
      const inside = dx * dx + dy * dy < 16 * 16;
      const shade = r.int(-40, 40);
      for (let c = 0; c < 3; c++) png.data[i + c] = Math.max(0, Math.min(255, base[c] + shade));
      png.data[i + 3] = inside ? 255 : 0;
    }
  }
  return pngjs.PNG.sync.write(png);
}

/** The icon as the data: URL Firefox's favicon service takes. */
export function iconDataUrl(color, seed) {
  return `data:image/png;base64,${iconPng(color, seed).toString("base64")}`;
}
