// The service's API, typed from openapi/openapi.json (openapi-typescript, `npm run generate`),
// called with openapi-fetch. Log entries that arrive on a stream are checked against the
// document's `Entry` schema (ajv), which is what makes them an `Entry` for the compiler: no cast.

import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { SchemaObject, ValidateFunction } from "ajv/dist/2020.js";
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/api.js";

export type Entry = components["schemas"]["Entry"];
export type Move = components["schemas"]["Move"];
export type Api = ReturnType<typeof createClient<paths>>;

/** How often a request refused for now (429, 503) is sent again before its refusal stands. */
const ATTEMPTS = 5;
/** The longest wait for one Retry-After: a proxy may ask for hours. */
const MAX_WAIT_MS = 60_000;

/** How many times a refusal was waited out (the example reports it). */
export const waited = { count: 0 };

/** Retry-After in ms: delay-seconds, or an HTTP-date read against the answer's own Date. */
export function retryAfterMs(response: Response): number {
  const value = response.headers.get("Retry-After")?.trim() ?? "";
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const until = Date.parse(value);
  const sent = Date.parse(response.headers.get("Date") ?? "");
  if (Number.isNaN(until)) return 1000;
  return Math.max(0, until - (Number.isNaN(sent) ? Date.now() : sent));
}

/** fetch that waits out a 429 or a 503 as its Retry-After says and sends the same request
 * again: its Idempotency-Key with it, so a change whose answer was lost is not made twice. */
async function patientFetch(request: Request): Promise<Response> {
  for (let attempt = 1; ; attempt += 1) {
    const response = await fetch(request.clone());
    if ((response.status !== 429 && response.status !== 503) || attempt === ATTEMPTS) return response;
    waited.count += 1;
    await new Promise((done) => setTimeout(done, Math.min(MAX_WAIT_MS, retryAfterMs(response))));
  }
}

export function api(baseUrl: string): Api {
  return createClient<paths>({ baseUrl, fetch: patientFetch });
}

export function bearer(token: string): { Authorization: string } {
  return { Authorization: `Bearer ${token}` };
}

function isSchema(value: unknown): value is SchemaObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A check that a value is a log entry as the OpenAPI document at `specPath` describes it. */
export function entryValidator(specPath: string): ValidateFunction<Entry> {
  const spec: unknown = JSON.parse(readFileSync(specPath, "utf8"));
  if (!isSchema(spec)) throw new Error(`${specPath} is not an OpenAPI document`);
  // OpenAPI 3.1 schemas are JSON Schema 2020-12; the document's other keywords are not schemas.
  const ajv = new Ajv2020({ strict: false });
  ajv.addSchema(spec, "openapi");
  return ajv.compile<Entry>({ $ref: "openapi#/components/schemas/Entry" });
}

/** The entry an SSE message carries, or null when its data is no entry. */
export function parseEntry(data: unknown, isEntry: ValidateFunction<Entry>): Entry | null {
  if (typeof data !== "string") return null;
  const parsed: unknown = JSON.parse(data);
  return isEntry(parsed) ? parsed : null;
}
