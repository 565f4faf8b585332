// Small inline icons (SVG, so they look the same without emoji fonts); always beside words.

import { svg } from "./dom.js";

function icon(name, ...shapes) {
  return svg("svg", { class: `icon icon-${name}`, viewBox: "0 0 24 24", "aria-hidden": "true", focusable: "false" }, ...shapes);
}

export const trainIcon = () => icon("train",
  svg("path", { d: "M3 17V9h4V5h7v4h3l4 4v4z", fill: "currentColor" }),
  svg("rect", { x: 9, y: 7, width: 3, height: 3, fill: "#fff", opacity: 0.7 }),
  svg("circle", { cx: 7, cy: 19, r: 2.2, fill: "currentColor" }),
  svg("circle", { cx: 17, cy: 19, r: 2.2, fill: "currentColor" }));

export const markerIcon = () => icon("marker",
  svg("path", { d: "M6 3v18", stroke: "currentColor", "stroke-width": 2.4, "stroke-linecap": "round" }),
  svg("path", { d: "M7 4h11l-3 4 3 4H7z", fill: "currentColor" }));

export const clockIcon = () => icon("clock",
  svg("circle", { cx: 12, cy: 13, r: 8, fill: "none", stroke: "currentColor", "stroke-width": 2.4 }),
  svg("path", { d: "M12 8v5l3 2M9 2h6", fill: "none", stroke: "currentColor", "stroke-width": 2.4, "stroke-linecap": "round" }));

export const trophyIcon = () => icon("trophy",
  svg("path", { d: "M7 3h10v5a5 5 0 0 1-10 0zM7 5H4v2a3 3 0 0 0 3 3M17 5h3v2a3 3 0 0 1-3 3M12 13v4M8 21h8l-1-4H9z", fill: "currentColor", stroke: "currentColor", "stroke-width": 1.2, "stroke-linejoin": "round" }));
