// The one i18n helper of the page and the popup: `t(key, substitutions)` words a message of
// _locales (the key itself when it is missing, so a gap shows instead of an empty line), and
// localize(root) fills every [data-i18n] element's text. `translator(getMessage)` is the pure
// part (the unit tests pass their own); `t` is bound to browser.i18n.
import browser from "./browser.js";

/** manifest.json's default_locale: the messages used when no language of the user's has any. */
export const DEFAULT_LOCALE = "en";

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

/**
 * The _locales folders to try for `languages` (navigator.languages' BCP 47 tags), best first:
 * "de-AT" gives de_AT then de, as browser.i18n falls back; the default locale comes last.
 */
export function localeCandidates(languages, defaultLocale = DEFAULT_LOCALE) {
  const out = [];
  for (const tag of languages ?? []) {
    const [language, region] = String(tag).split("-");
    for (const locale of [region ? `${language}_${region.toUpperCase()}` : null, language]) {
      if (locale && !out.includes(locale)) {
        out.push(locale);
      }
    }
  }
  return out.includes(defaultLocale) ? out : [...out, defaultLocale];
}

/**
 * A `t` for a page that has no WebExtension API: Firefox gives an add-on's pages no `browser` in
 * a private window unless the user allowed the add-on there, so browser.i18n is missing too.
 * Reads the same _locales/<locale>/messages.json files, through `load(locale)` (resolves to the
 * parsed file, rejects when there is none). Only for messages without placeholders.
 */
export async function fileTranslator(load, languages, defaultLocale = DEFAULT_LOCALE) {
  for (const locale of localeCandidates(languages, defaultLocale)) {
    const messages = await load(locale).catch(() => null);
    if (messages) {
      return translator((key) => messages[key]?.message ?? "");
    }
  }
  return translator(() => "");
}
