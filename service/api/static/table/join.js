// Take an open seat through an invite link. The token goes to localStorage and the address
// becomes the plain table link, so the invite never stays in the address bar or history.

import { game } from "./api.js";
import { h, replace } from "./dom.js";
import { held, remember } from "./seats.js";

const REFUSALS = {
  invite_not_found: "This invite link is not valid: check that it was copied whole, or ask for a new one.",
  invite_used: "This invite has already been used: each link seats one person. Ask the host for a new one.",
  game_not_found: "This game does not exist or has expired.",
};

export function showJoin(app, gameId, invite) {
  const mine = held(gameId);
  if (mine && mine.token && mine.invite === invite) {
    location.replace(`#/game/${encodeURIComponent(gameId)}`);
    return { stop() {} };
  }
  document.title = "Mexican Train — join a game";
  const error = h("p", { class: "problem", role: "alert", id: "join-problem" });
  const lead = h("p", { class: "lead" }, "You were invited to a game of Mexican Train.");
  const name = h("input", { id: "join-name", name: "name", maxlength: 40, required: true, autocomplete: "nickname" });
  const button = h("button", { type: "submit", class: "primary" }, "Take my seat");
  const form = h("form", { class: "panel create", "aria-labelledby": "join-title" },
    h("h1", { id: "join-title" }, "Join a game"),
    lead,
    h("label", { for: "join-name" }, "Your name"), name, error, button,
    h("p", {}, h("a", { href: "#/" }, "Create a game of your own instead")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    error.textContent = "";
    try {
      const seat = await game.join(gameId, invite, name.value.trim() || "Guest");
      remember(gameId, { seat: seat.seat, name: seat.name, token: seat.token, invite });
      // replace, not assign: Back must not lead to the used invite.
      history.replaceState(null, "", `#/game/${encodeURIComponent(gameId)}`);
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    } catch (problem) {
      error.textContent = REFUSALS[problem.code] || problem.message;
      button.disabled = false;
    }
  });
  replace(app, form);
  name.focus();
  // Who is at the table already; an unknown game says so before anyone types a name.
  game.view(gameId).then((view) => {
    const seated = view.players.filter((p) => !p.open).map((p) => (p.bot ? `${p.name} (bot)` : p.name));
    lead.textContent = `You were invited to a game of Mexican Train with ${seated.join(", ")}.`;
  }, (problem) => {
    if (problem.code === "game_not_found") {
      error.textContent = REFUSALS.game_not_found;
      button.disabled = true;
    }
  });
  return { stop() {} };
}
