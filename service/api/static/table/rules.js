// The rules in use, named on the table: the preset and the options that change play.

import { h } from "./dom.js";
import { t, tn } from "./i18n.js";

function presetName(preset) {
  if (preset === "tournament") return t("rules.tournament");
  if (preset === "classic") return t("rules.classic");
  return t("rules.standard");
}

function openingText(opts) {
  if (opts.opening === "single") return t("rules.opening_single");
  return t("rules.opening_chain");
}

function noPlayText(opts) {
  if (opts.opening_no_play === "draw_one") return t("rules.no_play_draw_one");
  if (opts.opening_no_play === "draw_until") return t("rules.no_play_draw_until");
  return t("rules.no_play_mark");
}

export function rulesLine(view) {
  const rules = view.rules || {};
  const opts = rules.options || {};
  const details = [
    t("rules.set", { set: opts.set, hand: opts.hand_size }),
    openingText(opts),
    noPlayText(opts),
    t("rules.doubles"),
    opts.double_follow === "satisfy" ? t("rules.follow_satisfy") : null,
    opts.chicken_foot ? t("rules.chicken_foot") : null,
    opts.mexican_needs_own_blocked ? t("rules.mexican_after_own") : null,
    opts.double_blank_points ? t("rules.double_blank", { points: opts.double_blank_points }) : null,
    t("rules.lowest_wins"),
  ].filter(Boolean);
  return h("details", { class: "rules" },
    h("summary", {}, tn("rules.in_use", opts.rounds, { preset: presetName(rules.preset), set: opts.set })),
    h("ul", {}, details.map((line) => h("li", {}, line))));
}
