// The one i18n helper of the page and the popup: `t(key, substitutions)` words a message of
// _locales (the key itself when it is missing, so a gap shows instead of an empty line), and
// localize(root) fills every [data-i18n] element's text. `translator(getMessage)` is the pure
// part (the unit tests pass their own); `t` is bound to browser.i18n.
import browser from "./browser.js";

/** A `t(key, substitutions)` over `getMessage` (browser.i18n.getMessage's shape). */
export function translator(getMessage) {
  return (key, substitutions) => getMessage(key, substitutions) || key;
}

export const t = translator((key, substitutions) => browser.i18n.getMessage(key, substitutions));

/** Sets the text of every [data-i18n] element under `root` to its message. */
export function localize(root, translate = t) {
  for (const element of root.querySelectorAll("[data-i18n]")) {
    element.textContent = translate(element.dataset.i18n);
  }
}
