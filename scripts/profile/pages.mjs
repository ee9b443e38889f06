// The local pages the restored session's tabs show (file:// URLs: no network, no server to
// start). Each is a plain article: a title, a stylesheet, a small form (the search field and
// comment box the session's form data fills) and paragraphs of text, 3–25 KB.
import fs from "node:fs";
import path from "node:path";
import { stream } from "./random.mjs";

const escape = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The HTML of one page of model.session.pages. Pure. */
export function pageHtml(page, seed) {
  const r = stream(seed, `page-${page.file}`);
  const paragraphs = Array.from({ length: page.paragraphs }, () => `<p>${escape(r.words(r.int(30, 90)))}.</p>`).join("\n");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escape(page.title)}</title>
<style>body { font: 16px/1.5 sans-serif; max-width: 42em; margin: 2em auto; } h1 { font-size: 1.6em; }</style>
</head>
<body>
<h1>${escape(page.title)}</h1>
<form role="search"><input id="q" type="search" aria-label="Search"> <textarea id="comment" aria-label="Comment"></textarea></form>
${paragraphs}
</body>
</html>
`;
}

/** Writes every page of `pages` into `dir` (made if missing). */
export function writePages(dir, pages, seed) {
  fs.mkdirSync(dir, { recursive: true });
  for (const page of pages) {
    fs.writeFileSync(path.join(dir, page.file), pageHtml(page, seed));
  }
}
