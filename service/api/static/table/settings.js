// The player's own choices for this browser: language, sound, numbers instead of pips, tile
// size. Kept in localStorage and applied as classes on <html>, so CSS does the drawing.

const KEY = "mexican-train.settings";
const DEFAULTS = { language: null, sound: true, numbers: false, zoom: 1 };
export const ZOOMS = [0.8, 1, 1.25, 1.5, 1.75];

export function settings() {
  try {
    return { ...DEFAULTS, ...(JSON.parse(localStorage.getItem(KEY) || "{}") || {}) };
  } catch (error) {
    return { ...DEFAULTS };
  }
}

export function saveSettings(change) {
  const next = { ...settings(), ...change };
  localStorage.setItem(KEY, JSON.stringify(next));
  applySettings(next);
  // What is laid out by measuring (the table's trains beside the rack) does it again.
  window.dispatchEvent(new Event("settings"));
  return next;
}

export function applySettings(chosen = settings()) {
  const root = document.documentElement;
  root.classList.toggle("numbers", Boolean(chosen.numbers));
  // CSSOM, not a style attribute: the page's CSP allows the one and forbids the other.
  root.style.setProperty("--zoom", String(ZOOMS.includes(chosen.zoom) ? chosen.zoom : 1));
}
