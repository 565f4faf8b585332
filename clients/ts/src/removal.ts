// One removal through api.ts, `DELETE /api/v1/players/{player_id}/webhooks/{webhook_id}`, and
// what its caller sees: the removal done (204), or the refusal as a problem.
//
//   node dist/removal.js <base url> <player id> <player token> <webhook id>
//
// Prints {"status", "code", "waited", "resent"} as JSON (`code`: null when it was removed), with
// how many refusals were waited out and requests sent again.

import { api, bearer, waited } from "./api.js";

const [baseUrl = "http://127.0.0.1:8000", playerId = "", token = "", webhookId = ""] =
  process.argv.slice(2);

async function main(): Promise<void> {
  const { error, response } = await api(baseUrl).DELETE(
    "/api/v1/players/{player_id}/webhooks/{webhook_id}",
    {
      params: { path: { player_id: playerId, webhook_id: webhookId } },
      headers: bearer(token),
    },
  );
  const code = error ? error.code : null;
  const found = { status: response.status, code, waited: waited.count, resent: waited.resent };
  console.log(JSON.stringify(found));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
