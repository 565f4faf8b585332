// Every word the page shows comes from one catalogue, strings.json: {language: {key: text}}.
// Texts hold {name} placeholders; a key with ".one" and ".other" forms is counted (tn). The
// browser's language is the default, a picker changes it, and the choice is kept.

import { settings, saveSettings } from "./settings.js";

export const LANGUAGES = [
  ["en", "English"],
  ["sw", "Kiswahili"],
  ["tr", "Türkçe"],
  ["ha", "Hausa"],
  ["ceb", "Cebuano"],
  ["fi", "Suomi"],
];
const FALLBACK = "en";
let catalogue = {};
let current = FALLBACK;

function browserLanguage() {
  const known = new Set(LANGUAGES.map(([code]) => code));
  for (const tag of navigator.languages || [navigator.language || FALLBACK]) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (known.has(base)) return base;
  }
  return FALLBACK;
}

export async function loadStrings() {
  const response = await fetch("/table/strings.json", { cache: "no-cache" });
  catalogue = await response.json();
  useLanguage(settings().language || browserLanguage(), { keep: false });
}

export function language() {
  return current;
}

export function useLanguage(code, { keep = true } = {}) {
  current = catalogue[code] ? code : FALLBACK;
  document.documentElement.lang = current;
  if (keep) saveSettings({ language: current });
}

function fill(text, params) {
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

export function t(key, params = {}) {
  const own = catalogue[current] || {};
  const text = key in own ? own[key] : (catalogue[FALLBACK] || {})[key];
  return fill(text === undefined ? key : text, params);
}

// Items as the page's language lists them ("ann, bo and cy"): Intl.ListFormat where the
// browser knows the language, else the catalogue's own "and" (list.and) before the last one
// (Chromium's ListFormat knows neither Hausa nor Cebuano, and would put in English's).
export function listOf(items) {
  if (Intl.ListFormat.supportedLocalesOf([current]).length) {
    return new Intl.ListFormat(current, { type: "conjunction" }).format(items);
  }
  if (items.length < 2) return items.join("");
  return `${items.slice(0, -1).join(", ")} ${t("list.and")} ${items[items.length - 1]}`;
}

// A text that begins a sentence with a word written in lower case ("you and bo win!"), with
// its first letter as the language writes it at a sentence's start.
export function sentence(text) {
  return text.charAt(0).toLocaleUpperCase(current) + text.slice(1);
}

// A counted text: "{n} tiles" / "{n} tile".
export function tn(key, n, params = {}) {
  const rules = new Intl.PluralRules(current === "ceb" ? "en" : current);
  const form = rules.select(n) === "one" ? "one" : "other";
  return t(`${key}.${form}`, { n, ...params });
}
