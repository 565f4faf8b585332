// Routes of the page, all in the address's fragment (never sent to a server):
//   #/                          create a game
//   #/join/<game id>/<invite>   take an open seat through an invite
//   #/game/<game id>            the table: as a seat when this browser holds one, else as a spectator

import { showCreate } from "./create.js";
import { showJoin } from "./join.js";
import { showTable } from "./table.js";

const app = document.getElementById("app");
let current = null;

function route() {
  if (current && current.stop) current.stop();
  current = null;
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "join" && parts.length === 3) current = showJoin(app, parts[1], parts[2]);
  else if (parts[0] === "game" && parts.length === 2) current = showTable(app, parts[1]);
  else current = showCreate(app);
}

window.addEventListener("hashchange", route);
route();
