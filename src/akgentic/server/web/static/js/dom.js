// Building DOM nodes from data. Text always goes in as text (never as markup), so
// nothing a member or a tool writes can inject HTML into the page.

const SVG_NS = "http://www.w3.org/2000/svg";

function fill(node, props, children) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.setAttribute("class", value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "text") node.textContent = value;
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** h("div", {class: "x", onclick: fn}, child, "text", ...) */
export function h(tag, props, ...children) {
  return fill(document.createElement(tag), props, children);
}

/** The same for SVG elements. */
export function s(tag, props, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), props, children);
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}
