// A marked section of a Markdown document (docs/benchmarks.md): each benchmark script writes its
// figures between `<!-- NAME:begin -->` and `<!-- NAME:end -->`, so that a run replaces its own
// section and leaves the rest of the document, the other runs' figures and the words around them,
// as they were. Pure; the scripts read and write the file.

/**
 * `doc` with `body` between the markers of `name`: the marked section replaced where the document
 * has one; else the section put right before the first `before` (a text of the document, an
 * error where it is missing) or, without `before`, at the end. `body` is kept as it is: `$&` and
 * the like in it are text, not replacement patterns.
 */
export function spliceSection(doc, name, body, { before } = {}) {
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${begin}\n${body}${end}`;
  const at = doc.indexOf(begin);
  if (at >= 0) {
    const stop = doc.indexOf(end, at + begin.length);
    if (stop < 0) {
      throw new Error(`${begin} without ${end} in the document`);
    }
    return `${doc.slice(0, at)}${block}${doc.slice(stop + end.length)}`;
  }
  if (before === undefined) {
    return `${doc.trimEnd()}\n\n${block}\n`;
  }
  const where = doc.indexOf(before);
  if (where < 0) {
    throw new Error(`neither ${begin} nor ${before} in the document`);
  }
  return `${doc.slice(0, where)}${block}\n\n${doc.slice(where)}`;
}
