// Moving a seat to another device: a one-time transfer ticket (POST .../transfers) shown as a
// link and a QR code; the other device opens #/take/<game>/<ticket>, claims it once and holds
// the seat's new token from then on, while this device's token stops working (it watches). The QR code is drawn by qrcode-generator
// (vendor/qrcode.js, MIT), module by module into SVG: no HTML is ever parsed.

import { ApiError, game } from "./api.js";
import { h, replace, svg } from "./dom.js";
import { t } from "./i18n.js";
import { worded } from "./hints.js";
import { remember } from "./seats.js";
import qrcode from "./vendor/qrcode.js";

export function takeUrl(gameId, ticket) {
  return `${location.origin}/#/take/${encodeURIComponent(gameId)}/${encodeURIComponent(ticket)}`;
}

export function qrSvg(text) {
  const qr = qrcode(0, "M");
  qr.addData(text);
  qr.make();
  const n = qr.getModuleCount();
  const quiet = 4;
  let d = "";
  for (let r = 0; r < n; r += 1) {
    for (let c = 0; c < n; c += 1) if (qr.isDark(r, c)) d += `M${c + quiet},${r + quiet}h1v1h-1z`;
  }
  const size = n + 2 * quiet;
  return svg("svg", { class: "qr", viewBox: `0 0 ${size} ${size}`, role: "img", "aria-label": t("transfer.qr_label"), dataset: { modules: n } },
    svg("rect", { x: 0, y: 0, width: size, height: size, fill: "#fff" }),
    svg("path", { d, fill: "#000" }));
}

export function transferPanel(ticket, onClose) {
  const url = takeUrl(ticket.gameId, ticket.ticket);
  const expires = new Date(ticket.expires_at);
  // The data-keys keep the focus on the panel, its link or its button when the table redraws.
  return h("section", { class: "panel transfer", id: "transfer", tabindex: "-1", "aria-labelledby": "transfer-title", dataset: { key: "transfer" } },
    h("h2", { id: "transfer-title" }, t("transfer.title")),
    h("p", {}, t("transfer.text", { time: expires.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) })),
    h("div", { class: "transfer-body" },
      qrSvg(url),
      h("div", { class: "transfer-link" },
        h("label", { for: "transfer-url" }, t("transfer.link")),
        h("input", { id: "transfer-url", type: "text", readonly: true, value: url, dataset: { key: "transfer-url" } }),
        h("p", { class: "note" }, t("transfer.once")))),
    h("button", { type: "button", class: "button", onclick: onClose, dataset: { key: "transfer-close" } }, t("transfer.close")));
}

// The receiving device: redeem the ticket, keep the seat, and open the table.
export function showTake(app, gameId, ticket) {
  document.title = `${t("app.title")} — ${t("transfer.taking")}`;
  const status = h("p", { role: "status" }, t("transfer.taking"));
  replace(app, h("section", { class: "panel gone" }, h("h1", {}, t("transfer.take_title")), status));
  game.redeem(gameId, ticket).then((seat) => {
    remember(gameId, { seat: seat.seat, name: seat.name, token: seat.token });
    history.replaceState(null, "", `#/game/${encodeURIComponent(gameId)}`);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  }, (error) => {
    if (!(error instanceof ApiError)) throw error;
    status.setAttribute("role", "alert");
    status.className = "problem";
    status.id = "take-problem";
    status.textContent = worded(error).text;
  });
  return { stop() {} };
}
