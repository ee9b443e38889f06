// The node builders every page module uses, so that no module needs innerHTML: text always goes
// in as text. Shared by the page's sections and the popup.
const SVG_NS = "http://www.w3.org/2000/svg";

/** An HTML element with optional text, class, attributes and children. */
export function el(tag, { text = null, className = null, attrs = {} } = {}, ...children) {
  const node = document.createElement(tag);
  if (text !== null && text !== undefined) {
    node.textContent = text;
  }
  if (className) {
    node.className = className;
  }
  for (const [name, value] of Object.entries(attrs ?? {})) {
    node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

/** An SVG element with attributes (numbers are fine) and optional text. */
export function svgEl(tag, attrs = {}, text = null) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    node.setAttribute(name, String(value));
  }
  if (text !== null && text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** The element with this id. */
export const $ = (id) => document.getElementById(id);
