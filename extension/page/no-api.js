// The page where Firefox gives it no WebExtension API: a private window, unless the user allowed
// the add-on to run there (docs/design/about-startup-url.md, "Private windows"). The page's
// document still loads (about:startup is registered in every process), so instead of failing at
// its first browser.* call it says why it is empty and how to change that, in the user's
// language, read from the add-on's own _locales files.
import { fileTranslator, localize } from "../lib/wording/i18n.js";

/** Reads one _locales file of this add-on (same origin, no API needed). */
async function loadMessages(locale) {
  const response = await fetch(new URL(`../_locales/${locale}/messages.json`, import.meta.url));
  if (!response.ok) {
    throw new Error(`${locale}: ${response.status}`);
  }
  return response.json();
}

/** Words the page from the files and shows only the explanation. */
export async function showWithoutApi(doc = document) {
  const translate = await fileTranslator(loadMessages, navigator.languages);
  localize(doc, translate);
  doc.body.dataset.state = "no-api";
  doc.getElementById("no-api").hidden = false;
}
