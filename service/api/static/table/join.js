// Take an open seat through an invite link. The token goes to localStorage and the address
// becomes the plain table link, so the invite never stays in the address bar or history.

import { game } from "./api.js";
import { h, replace } from "./dom.js";
import { listOf, t } from "./i18n.js";
import { worded } from "./hints.js";
import { held, remember } from "./seats.js";

export function showJoin(app, gameId, invite) {
  const mine = held(gameId);
  if (mine && mine.token && mine.invite === invite) {
    location.replace(`#/game/${encodeURIComponent(gameId)}`);
    return { stop() {} };
  }
  document.title = `${t("app.title")} — ${t("join.title")}`;
  const error = h("p", { class: "problem", role: "alert", id: "join-problem" });
  const lead = h("p", { class: "lead" }, t("join.lead"));
  const name = h("input", { id: "join-name", name: "name", maxlength: 40, required: true, autocomplete: "nickname" });
  const button = h("button", { type: "submit", class: "primary" }, t("join.submit"));
  const form = h("form", { class: "panel create", "aria-labelledby": "join-title" },
    h("h1", { id: "join-title" }, t("join.title")),
    lead,
    h("label", { for: "join-name" }, t("create.your_name")), name, error, button,
    h("p", {}, h("a", { href: "#/" }, t("join.own_game"))));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    error.textContent = "";
    try {
      const seat = await game.join(gameId, invite, name.value.trim() || t("join.guest"));
      remember(gameId, { seat: seat.seat, name: seat.name, token: seat.token, invite });
      // replace, not assign: Back must not lead to the used invite.
      history.replaceState(null, "", `#/game/${encodeURIComponent(gameId)}`);
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    } catch (problem) {
      error.textContent = worded(problem).text;
      button.disabled = false;
    }
  });
  replace(app, form);
  name.focus();
  // Who is at the table already; an unknown game says so before anyone types a name.
  game.view(gameId).then((view) => {
    const seated = view.players.filter((p) => !p.open).map((p) => (p.bot ? t("join.bot_name", { name: p.name }) : p.name));
    lead.textContent = t("join.lead_with", { names: listOf(seated) });
  }, (problem) => {
    if (problem.code === "game_not_found") {
      error.textContent = t("refuse.game_not_found");
      button.disabled = true;
    }
  });
  return { stop() {} };
}
