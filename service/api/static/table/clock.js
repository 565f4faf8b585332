// The turn clock: a bar that shrinks and changes colour (calm, hurry, last seconds, each also
// said in words) and, on the player's own turn, a short beep each of the last seconds unless
// the player switched sound off. Beeps are counted on <body data-beeps> for the tests to read.

import { h } from "./dom.js";
import { t } from "./i18n.js";
import { settings } from "./settings.js";

const HURRY = 0.5;
const LAST = 0.25;
const BEEP_SECONDS = 5;
let audio = null;
let beeped = "";

// Browsers let a page make sound only after a gesture: the first key or click opens it.
export function unlockAudio() {
  if (audio || !window.AudioContext) return;
  audio = new AudioContext();
}

function beep(seconds) {
  document.body.dataset.beeps = String(Number(document.body.dataset.beeps || 0) + 1);
  if (!audio) return;
  const osc = audio.createOscillator();
  const gain = audio.createGain();
  osc.frequency.value = seconds <= 2 ? 880 : 660;
  gain.gain.value = 0.08;
  osc.connect(gain).connect(audio.destination);
  osc.start();
  osc.stop(audio.currentTime + 0.12);
}

export function secondsLeft(deadline) {
  if (!deadline) return null;
  return Math.max(0, (Date.parse(deadline) - Date.now()) / 1000);
}

export function clockText(left) {
  const whole = Math.ceil(left);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}

function stage(fraction) {
  if (fraction <= LAST) return "last";
  if (fraction <= HURRY) return "hurry";
  return "calm";
}

// The bar for the seat on turn, or null without a running clock.
export function clockBar(view, { mine }) {
  const clock = view.clock || {};
  if (view.status !== "in_round" || !clock.deadline || !clock.turn_seconds) return null;
  const bar = h("div", { class: ["clock-bar", mine && "mine"], dataset: { deadline: clock.deadline, total: clock.turn_seconds } },
    h("span", { class: "clock-label" }, mine ? t("clock.yours") : t("clock.theirs")),
    h("span", { class: "clock-track", "aria-hidden": "true" }, h("span", { class: "clock-fill" })),
    h("span", { class: "clock-left" }));
  updateBar(bar);
  return bar;
}

// Called every quarter second: the bar's width, colour, words, and the beeps.
export function updateBar(bar) {
  const left = secondsLeft(bar.dataset.deadline);
  if (left === null) return;
  const total = Number(bar.dataset.total) || 1;
  const fraction = Math.min(1, left / total);
  const now = stage(fraction);
  bar.classList.remove("calm", "hurry", "last");
  bar.classList.add(now);
  bar.querySelector(".clock-fill").style.setProperty("--left", String(fraction));
  const words = { calm: t("clock.stage_calm"), hurry: t("clock.stage_hurry"), last: t("clock.stage_last") }[now];
  bar.querySelector(".clock-left").textContent = `${clockText(left)} · ${words}`;
  const whole = Math.ceil(left);
  const key = `${bar.dataset.deadline}/${whole}`;
  if (bar.classList.contains("mine") && whole > 0 && whole <= BEEP_SECONDS && beeped !== key) {
    beeped = key; // once per second of a turn, however often the table is drawn
    if (settings().sound) beep(whole);
  }
}
