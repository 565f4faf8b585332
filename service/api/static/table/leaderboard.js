// The leaderboard (GET /leaderboard): people or bots by displayed rating (mu - 3 sigma), with
// their rated games and wins.

import { ApiError, leaderboard } from "./api.js";
import { h, replace } from "./dom.js";
import { t } from "./i18n.js";
import { worded } from "./hints.js";

function rows(players) {
  return players.map((p, index) => h("tr", { dataset: { player: p.player_id } },
    h("td", {}, String(index + 1)),
    h("th", { scope: "row" }, p.name),
    h("td", { class: "rating" }, p.rating.display.toFixed(1)),
    h("td", {}, String(p.games)),
    h("td", {}, String(p.wins))));
}

function board(kind, players) {
  if (!players.length) return h("p", { class: "empty-board" }, t("board.empty"));
  return h("table", { class: "scores board", id: `board-${kind}` },
    h("caption", {}, kind === "bots" ? t("board.bots") : t("board.people")),
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, "#"),
      h("th", { scope: "col" }, t("board.name")),
      h("th", { scope: "col" }, t("board.rating")),
      h("th", { scope: "col" }, t("board.games")),
      h("th", { scope: "col" }, t("board.wins")))),
    h("tbody", {}, rows(players)));
}

export function showLeaderboard(app, kind = "people") {
  document.title = `${t("app.title")} — ${t("board.title")}`;
  const body = h("div", { class: "board-body" }, h("p", { role: "status" }, t("games.asking")));
  const tab = (value, label) => h("a", { href: `#/leaderboard/${value}`, class: ["button", value === kind && "primary"], "aria-current": value === kind ? "page" : null }, label);
  replace(app, h("section", { class: "panel leaderboard", "aria-labelledby": "board-title" },
    h("h1", { id: "board-title" }, t("board.title")),
    h("p", { class: "lead" }, t("board.lead")),
    h("nav", { class: "board-tabs", "aria-label": t("board.title") }, tab("people", t("board.people")), tab("bots", t("board.bots"))),
    body));
  leaderboard(kind).then((answer) => replace(body, board(kind, answer.players)), (error) => {
    if (!(error instanceof ApiError)) throw error;
    replace(body, h("p", { class: "problem", role: "alert" }, worded(error).text));
  });
  return { stop() {} };
}
