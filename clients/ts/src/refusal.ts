// One call through api.ts, `POST /api/v1/games`, and what its caller sees: the new game, or
// the refusal as a problem (`code`, `status`, `detail`), whatever body the refusal came with
// (the service's problem, a proxy's HTML page).
//
//   node dist/refusal.js <base url>
//
// Prints {"status", "game_id"} or {"status", "code", "problem_status", "detail"} as JSON, with
// how many refusals were waited out and requests sent again; or {"thrown", "message"} when the
// call threw (its error's name: `UnexpectedAnswer` for a successful answer that is not JSON).

import { api, waited } from "./api.js";

const [baseUrl = "http://127.0.0.1:8000"] = process.argv.slice(2);

async function main(): Promise<void> {
  let answered;
  try {
    answered = await api(baseUrl).POST("/api/v1/games", { body: { players: ["ann", "bo"] } });
  } catch (thrown: unknown) {
    const name = thrown instanceof Error ? thrown.name : typeof thrown;
    const message = thrown instanceof Error ? thrown.message : String(thrown);
    console.log(JSON.stringify({ thrown: name, message }));
    return;
  }
  const { data, error, response } = answered;
  const counts = { waited: waited.count, resent: waited.resent };
  if (error) {
    const { code, status, detail } = error;
    const found = { status: response.status, code, problem_status: status, detail };
    console.log(JSON.stringify({ ...found, ...counts }));
    return;
  }
  console.log(JSON.stringify({ status: response.status, game_id: data.game_id, ...counts }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
