import { test } from "node:test";
import assert from "node:assert/strict";
import { spliceSection } from "../../../../scripts/lib/doc-section.mjs";

const DOC = "# Benchmarks\n\nwords\n\n<!-- io-bench-fast:begin -->\nold figures\n<!-- io-bench-fast:end -->\n\nmore words\n";

test("a run's section replaces its own figures and leaves the words around them", () => {
  const after = spliceSection(DOC, "io-bench-fast", "new figures\n");
  assert.equal(after, DOC.replace("old figures", "new figures"));
});

test("the body is text: $& and $1 are not replacement patterns", () => {
  const after = spliceSection(DOC, "io-bench-fast", "cost $& and $1 and $$\n");
  assert.equal(after, DOC.replace("old figures", () => "cost $& and $1 and $$"));
});

test("only the named section moves: a section whose name begins the same stays", () => {
  const two = `${DOC}\n<!-- io-bench-fast-2:begin -->\nkept\n<!-- io-bench-fast-2:end -->\n`;
  const after = spliceSection(two, "io-bench-fast", "new\n");
  assert.match(after, /<!-- io-bench-fast-2:begin -->\nkept\n<!-- io-bench-fast-2:end -->/);
  assert.match(after, /<!-- io-bench-fast:begin -->\nnew\n<!-- io-bench-fast:end -->/);
});

test("a new section goes at the end, or right before the text named", () => {
  assert.equal(spliceSection("# B\n\n", "restart-bench", "x\n"), "# B\n\n<!-- restart-bench:begin -->\nx\n<!-- restart-bench:end -->\n");
  assert.equal(
    spliceSection("# B\n\n## What do preload and prefetch buy?\n", "pack-sweep", "y\n", { before: "## What do preload and prefetch buy?" }),
    "# B\n\n<!-- pack-sweep:begin -->\ny\n<!-- pack-sweep:end -->\n\n## What do preload and prefetch buy?\n",
  );
});

test("a missing anchor or an unclosed section is an error, not a silent append", () => {
  assert.throws(() => spliceSection("# B\n", "pack-sweep", "y\n", { before: "## Nowhere" }), /neither <!-- pack-sweep:begin --> nor ## Nowhere in the document/);
  assert.throws(() => spliceSection("# B\n<!-- restart-bench:begin -->\nhalf\n", "restart-bench", "x\n"), /<!-- restart-bench:begin --> without <!-- restart-bench:end -->/);
});
