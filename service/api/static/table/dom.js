// A tiny element builder: text always goes in as text (names come from other players), never
// as HTML, and no inline style attributes (the page's CSP forbids them).

const SVG_NS = "http://www.w3.org/2000/svg";

function build(element, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") element.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    else if (name === "text") element.textContent = value;
    else if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

export function svg(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function replace(container, ...children) {
  container.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

// Screen readers hear moves and "your turn" from one live region that is never redrawn (a
// region rebuilt with the table may never be read out). What is announced in one task is said
// at once: a bot's move and the "your turn" it brings would otherwise overwrite each other
// before a reader hears the first.
let pending = [];
export function announce(text) {
  const region = document.getElementById("announce");
  if (!region || !text) return;
  if (!pending.length) {
    queueMicrotask(() => {
      region.textContent = pending.join(". ");
      pending = [];
    });
  }
  pending.push(text);
}
