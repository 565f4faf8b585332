// Domino tiles drawn as SVG: pips in the classic layouts (3x3 grid up to 9, three columns
// beyond), each number with its own pip colour as an extra cue; the count is the signal. Each
// half also carries its number, shown instead of the pips when the player asks for numbers.
// Colours come from a palette told apart under the common colour-vision deficiencies
// (Okabe-Ito); 8 to 12 reuse 1 to 5's colours as rings, so shape tells those apart.

import { svg } from "./dom.js";

const GRID = {
  0: [],
  1: [[1, 1]],
  2: [[0, 0], [2, 2]],
  3: [[0, 0], [1, 1], [2, 2]],
  4: [[0, 0], [2, 0], [0, 2], [2, 2]],
  5: [[0, 0], [2, 0], [1, 1], [0, 2], [2, 2]],
  6: [[0, 0], [2, 0], [0, 1], [2, 1], [0, 2], [2, 2]],
  7: [[0, 0], [2, 0], [0, 1], [1, 1], [2, 1], [0, 2], [2, 2]],
  8: [[0, 0], [1, 0], [2, 0], [0, 1], [2, 1], [0, 2], [1, 2], [2, 2]],
  9: [[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1], [0, 2], [1, 2], [2, 2]],
};

// Points on a half of size 1x1 (x, y from 0 to 1).
function pipPoints(n) {
  if (n <= 9) return GRID[n].map(([c, r]) => [0.22 + c * 0.28, 0.22 + r * 0.28]);
  const rows = Math.ceil(n / 3);
  const points = [];
  for (let i = 0; i < n; i += 1) {
    const row = Math.floor(i / 3);
    const inRow = Math.min(3, n - row * 3);
    const col = (i % 3) + (3 - inRow) / 2;
    points.push([0.2 + col * 0.3, 0.14 + (row * 0.72) / Math.max(1, rows - 1)]);
  }
  return points;
}

function half(n, x, y, size) {
  const radius = n > 9 ? size * 0.065 : size * 0.085;
  const ring = n >= 8;
  const pips = pipPoints(n).map(([px, py]) =>
    svg("circle", { class: ["pip", `pip-${n % 13}`, ring && "ring"], cx: x + px * size, cy: y + py * size, r: ring ? radius * 0.8 : radius }),
  );
  const number = svg("text", { class: "number", x: x + size / 2, y: y + size / 2, "text-anchor": "middle", "dominant-baseline": "central" }, String(n));
  return [svg("g", { class: "pips" }, pips), number];
}

export function tileName([a, b]) {
  return `${a}-${b}`;
}

// A tile face; `vertical` stacks the halves (hand, doubles across a train).
export function tileFace([a, b], { vertical = false } = {}) {
  const s = 50;
  const [w, hgt] = vertical ? [s, 2 * s] : [2 * s, s];
  return svg(
    "svg",
    { class: "face", viewBox: `0 0 ${w} ${hgt}`, "aria-hidden": "true", focusable: "false" },
    svg("rect", { class: "body", x: 1.5, y: 1.5, width: w - 3, height: hgt - 3, rx: 7 }),
    vertical
      ? svg("line", { class: "divider", x1: 8, y1: s, x2: s - 8, y2: s })
      : svg("line", { class: "divider", x1: s, y1: 8, x2: s, y2: s - 8 }),
    half(a, 0, 0, s),
    vertical ? half(b, 0, s, s) : half(b, s, 0, s),
  );
}

export function tileBack() {
  return svg(
    "svg",
    { class: "face back", viewBox: "0 0 50 100", "aria-hidden": "true", focusable: "false" },
    svg("rect", { class: "body", x: 1.5, y: 1.5, width: 47, height: 97, rx: 7 }),
    svg("circle", { class: "emblem", cx: 25, cy: 50, r: 9 }),
  );
}
