// The one i18n helper of the page and the popup: `t(key, substitutions)` words a message of
// _locales (the key itself when it is missing, so a gap shows instead of an empty line), and
// localize(root) fills every [data-i18n] element's text. `translator(getMessage)` is the pure
// part (the unit tests pass their own); `t` is bound to browser.i18n. WebExtension messages have no
// plural rules, so `tn(key, count, substitutions)` picks a count's form: `<key>One` (and `<key>Two`,
// `<key>Few`… where a locale has them) by Intl.PluralRules, else `<key>`, the "other" form.
import browser from "../transport/browser.js";

/** manifest.json's default_locale: the messages used when no language of the user's has any. */
export const DEFAULT_LOCALE = "en";

/** A `t(key, substitutions)` over `getMessage` (browser.i18n.getMessage's shape). */
export function translator(getMessage) {
  return (key, substitutions) => getMessage(key, substitutions) || key;
}

export const t = translator((key, substitutions) => browser.i18n.getMessage(key, substitutions));

const pluralRules = new Map();

/**
 * The plural rules of the messages `t` words: the language their file names in its
 * "messagesLanguage" message (not the UI's: a French UI over the English file must still say
 * "0 files"), the default locale's when that is missing or no language tag.
 */
function rulesOf(t) {
  const language = t("messagesLanguage");
  if (!pluralRules.has(language)) {
    let rules;
    try {
      rules = new Intl.PluralRules(language);
    } catch {
      rules = new Intl.PluralRules(DEFAULT_LOCALE);
    }
    pluralRules.set(language, rules);
  }
  return pluralRules.get(language);
}

/**
 * A plural-aware `tn(key, count, substitutions)` over `t` (pure, for any `t` of this module's
 * shape): `<key>One` for a count the language calls "one" (1 in English), `<key>Two`/`Few`/
 * `Many`/`Zero` likewise where a translation has them, and `<key>`, the "other" form, for the
 * rest and whenever the specific form is missing. `substitutions` default to the count alone.
 */
export function plural(t) {
  return (key, count, substitutions = [String(count)]) => {
    const category = typeof count === "number" && Number.isFinite(count) ? rulesOf(t).select(count) : "other";
    if (category !== "other") {
      const specific = `${key}${category[0].toUpperCase()}${category.slice(1)}`;
      const text = t(specific, substitutions);
      if (text !== specific) {
        return text;
      }
    }
    return t(key, substitutions);
  };
}

export const tn = plural(t);

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
