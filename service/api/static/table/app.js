// Routes of the page, all in the address's fragment (never sent to a server):
//   #/                          create a game, and the games this browser holds
//   #/join/<game id>/<invite>   take an open seat through an invite
//   #/take/<game id>/<ticket>   take a seat moved from another device
//   #/game/<game id>            the table: as a seat when this browser holds one, else as a spectator
//   #/leaderboard[/bots]        people (or bots) by rating

import { showCreate } from "./create.js";
import { h, replace } from "./dom.js";
import { LANGUAGES, language, loadStrings, t, useLanguage } from "./i18n.js";
import { showJoin } from "./join.js";
import { showLeaderboard } from "./leaderboard.js";
import { applySettings, saveSettings, settings, ZOOMS } from "./settings.js";
import { showTable } from "./table.js";
import { showTake } from "./transfer.js";
import { unlockAudio } from "./clock.js";

const app = document.getElementById("app");
let current = null;

function route() {
  if (current && current.stop) current.stop();
  current = null;
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "join" && parts.length === 3) current = showJoin(app, parts[1], parts[2]);
  else if (parts[0] === "take" && parts.length === 3) current = showTake(app, parts[1], parts[2]);
  else if (parts[0] === "game" && parts.length === 2) current = showTable(app, parts[1]);
  else if (parts[0] === "leaderboard") current = showLeaderboard(app, parts[1] === "bots" ? "bots" : "people");
  else current = showCreate(app);
}

function zoomBy(step) {
  const index = ZOOMS.indexOf(settings().zoom);
  const next = ZOOMS[Math.min(ZOOMS.length - 1, Math.max(0, (index < 0 ? 1 : index) + step))];
  saveSettings({ zoom: next });
  controls();
}

// The bar's own controls: language, sound, numbers instead of pips, tile size.
function controls() {
  const chosen = settings();
  const picker = h("select", { id: "language", "aria-label": t("controls.language") },
    LANGUAGES.map(([code, name]) => h("option", { value: code, lang: code, selected: code === language() }, name)));
  picker.addEventListener("change", () => {
    useLanguage(picker.value);
    controls();
    route();
  });
  // Sound and numbers need no redraw of the page: the clock reads the setting, CSS the class.
  const toggle = (id, on, label, change) => h("button", {
    type: "button", id, class: "control", "aria-pressed": on ? "true" : "false",
    onclick: () => { saveSettings(change(!on)); controls(); document.getElementById(id).focus(); },
  }, label);
  replace(document.getElementById("controls"),
    toggle("sound", chosen.sound, chosen.sound ? t("controls.sound_on") : t("controls.sound_off"), (on) => ({ sound: on })),
    toggle("numbers", chosen.numbers, t("controls.numbers"), (on) => ({ numbers: on })),
    h("span", { class: "zoom", role: "group", "aria-label": t("controls.tile_size") },
      h("button", { type: "button", class: "control", id: "zoom-out", "aria-label": t("controls.smaller"), onclick: () => zoomBy(-1) }, "A−"),
      h("button", { type: "button", class: "control", id: "zoom-in", "aria-label": t("controls.larger"), onclick: () => zoomBy(1) }, "A+")),
    h("a", { href: "#/leaderboard", class: "control", id: "to-leaderboard" }, t("board.title")),
    picker);
  document.querySelector(".brand span").textContent = t("app.title");
}

async function main() {
  applySettings();
  await loadStrings();
  controls();
  window.addEventListener("hashchange", route);
  document.addEventListener("pointerdown", unlockAudio, { once: true });
  document.addEventListener("keydown", unlockAudio, { once: true });
  route();
}

main();
