// The service's API, typed from openapi/openapi.json (openapi-typescript, `npm run generate`),
// called with openapi-fetch. Log entries that arrive on a stream are checked against the
// document's `Entry` schema (ajv), which is what makes them an `Entry` for the compiler: no cast.

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { SchemaObject, ValidateFunction } from "ajv/dist/2020.js";
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/api.js";

export type Entry = components["schemas"]["Entry"];
export type Move = components["schemas"]["Move"];
export type Problem = components["schemas"]["Problem"];
export type Api = ReturnType<typeof createClient<paths>>;

/** How often a request refused for now (429, 502-504) or unanswered is sent before giving up. */
const ATTEMPTS = 5;
/** The longest Retry-After waited out (the service asks for a minute at most): a longer one
 * (a proxy may ask for hours) answers the refusal at once, since asking sooner than told would
 * only be refused again. */
const MAX_WAIT_MS = 60_000;
/** How long one attempt may wait for its answer before it counts as unanswered: a stream's
 * headers, any other answer whole (its body too). */
const ANSWER_TIMEOUT_MS = 30_000;

/** How many times a refusal was waited out, and a request whose answer never came was sent
 * again (the example reports both). */
export const waited = { count: 0, resent: 0 };

/** Retry-After in ms: delay-seconds, or an HTTP-date read against the answer's own Date. */
export function retryAfterMs(response: Response): number {
  const value = response.headers.get("Retry-After")?.trim() ?? "";
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const until = Date.parse(value);
  const sent = Date.parse(response.headers.get("Date") ?? "");
  if (Number.isNaN(until)) return 1000;
  return Math.max(0, until - (Number.isNaN(sent) ? Date.now() : sent));
}

/** Methods whose repeat changes nothing more than their first try (RFC 9110, 9.2.2): reads,
 * and a removal. The API takes no Idempotency-Key on its one removal (a webhook's DELETE). */
const IDEMPOTENT_METHODS = ["GET", "HEAD", "DELETE"];

/** Whether sending `request` again can apply nothing twice: an idempotent method, or a change
 * that carries an Idempotency-Key (the service answers its repeat with the first answer). */
function resendable(request: Request): boolean {
  return IDEMPOTENT_METHODS.includes(request.method) || request.headers.has("Idempotency-Key");
}

/** `request` with an Idempotency-Key: a change the caller sent without one gets a random UUID,
 * made once for the call and sent on each of its tries, so that a change whose answer was lost
 * (or refused 502-504 by a proxy after it may have reached the service) can be sent again and
 * applies once. */
export function keyed(request: Request): Request {
  if (resendable(request)) return request;
  const headers = new Headers(request.headers);
  headers.set("Idempotency-Key", randomUUID());
  return new Request(request, { headers });
}

/** Answers of a proxy (or of the service briefly away) after which the request may or may not
 * have been applied: sent again only when that is safe (`resendable`). */
const UNAVAILABLE = [502, 503, 504];

/** The 404 codes a removal's repeat meets when its first try removed the thing unheard (the
 * service keeps no answer of a removal): the removal is then done. */
const GONE_CODES: ReadonlyArray<Problem["code"]> = ["webhook_not_found"];

/** Whether `response` is the 404 of what `request`, a removal, removes. */
async function isGone(request: Request, response: Response): Promise<boolean> {
  if (request.method !== "DELETE" || response.status !== 404) return false;
  const code = problemCode(parsed(await response.clone().text()));
  return GONE_CODES.some((gone) => gone === code);
}

/** Capped exponential back-off with full jitter, for an attempt that got no answer. */
function backoffMs(attempt: number): number {
  return Math.random() * Math.min(2000, 100 * 2 ** attempt);
}

/** A wait of `ms` that the caller's abort ends at once, with its reason. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done, fail) => {
    const stop = (): void => {
      clearTimeout(timer);
      fail(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      done();
    }, ms);
    signal.addEventListener("abort", stop, { once: true });
  });
}

/** Media types whose body is a stream: read as it comes, for as long as its reader wants. */
const STREAMS = ["text/event-stream", "application/x-ndjson"];

function isStream(response: Response): boolean {
  const media = response.headers.get("Content-Type")?.split(";")[0]?.trim().toLowerCase();
  return media !== undefined && STREAMS.includes(media);
}

/** One attempt: the answer, or the error of a connection that failed, dropped or stayed silent
 * past ANSWER_TIMEOUT_MS. The caller's signal is the fetch's for the whole answer, body
 * included: a signal that stopped at the headers would leave a stream's reader unable to
 * stop it. A stream's answer is returned at its headers, and the timeout never cuts its body;
 * any other answer is read whole within the timeout, so one whose body stalls counts as
 * unanswered and may be sent again (left to fetch, it would fail minutes later, in the
 * caller's parsing, past every retry). */
async function attempt(request: Request): Promise<Response> {
  request.signal.throwIfAborted();
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new Error("no answer in time")), ANSWER_TIMEOUT_MS);
  try {
    const signal = AbortSignal.any([request.signal, timeout.signal]);
    const response = await fetch(request.clone(), { signal });
    if (response.body === null || isStream(response)) return response;
    const body = await response.arrayBuffer();
    const headers = new Headers(response.headers);
    headers.delete("Content-Length"); // arrayBuffer() undid any encoding: the length is the body's
    headers.delete("Content-Encoding");
    const { status, statusText } = response;
    return new Response(body, { status, statusText, headers });
  } finally {
    clearTimeout(timer);
  }
}

/** The code a refusal without a problem body of its own gets: its status's, as the service
 * and its nginx name them. */
const CODE_OF_STATUS: Partial<Record<number, Problem["code"]>> = {
  400: "malformed_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  406: "not_acceptable",
  409: "conflict",
  412: "stale_version",
  413: "body_too_large",
  414: "uri_too_long",
  415: "unsupported_media_type",
  428: "precondition_required",
  429: "rate_limited",
  431: "headers_too_large",
  502: "unavailable",
  503: "unavailable",
  504: "unavailable",
};

/** The `code` of a problem body, or undefined when `value` has none. */
function problemCode(value: unknown): string | undefined {
  const coded = typeof value === "object" && value !== null && "code" in value;
  return coded && typeof value.code === "string" ? value.code : undefined;
}

function isProblem(value: unknown): boolean {
  const status = typeof value === "object" && value !== null && "status" in value;
  return problemCode(value) !== undefined && status && typeof value.status === "number";
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A refusal (4xx, 5xx) whose body is a problem, as openapi-fetch's `error` is typed: the
 * service's own passes as it came; anything else (a proxy's HTML 502 or 504 page, an empty
 * body, which openapi-fetch would give as a string or as no error at all) becomes one with the
 * code of its status (`internal_error` for another 5xx, `malformed_request` for another 4xx)
 * and the start of the body as `detail`. */
export async function asProblem(response: Response): Promise<Response> {
  if (response.status < 400) return response;
  const text = await response.text();
  const headers = new Headers(response.headers);
  headers.delete("Content-Length"); // the new body's is its own, and text() undid any encoding
  headers.delete("Content-Encoding");
  const init = { status: response.status, statusText: response.statusText, headers };
  if (isProblem(parsed(text))) return new Response(text, init);
  const fallback = response.status >= 500 ? "internal_error" : "malformed_request";
  const problem: Problem = {
    type: "about:blank",
    title: response.statusText,
    status: response.status,
    detail: text.slice(0, 200) || response.statusText,
    code: CODE_OF_STATUS[response.status] ?? fallback,
  };
  headers.set("Content-Type", "application/problem+json");
  return new Response(JSON.stringify(problem), init);
}

/** A successful answer that is not what the API sends: a body that is not JSON (a captive
 * portal's page, a misrouted proxy's), which openapi-fetch would fail to parse with a bare
 * SyntaxError. `detail` is the start of the body. */
export class UnexpectedAnswer extends Error {
  override name = "UnexpectedAnswer";

  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(`answered ${status} with a body that is not JSON: ${detail}`);
  }
}

/** `response` as the caller gets it: a refusal as a problem (`asProblem`); a successful
 * answer as it came, unless its body is not JSON (UnexpectedAnswer). A stream's is read by
 * its reader. */
async function checked(response: Response): Promise<Response> {
  if (response.status >= 400) return asProblem(response);
  if (response.body === null || isStream(response)) return response;
  const text = await response.clone().text();
  try {
    if (text !== "") JSON.parse(text);
  } catch {
    throw new UnexpectedAnswer(response.status, text.slice(0, 200));
  }
  return response;
}

/** fetch that sends a request again, the same (its Idempotency-Key with it, made by `keyed`
 * when the caller gave none, so a change whose answer was lost is not made twice): after a
 * 429, or a 502-504 (a proxy's, or the service or its Redis briefly away), as the answer's
 * Retry-After says, up to MAX_WAIT_MS, or with a jittered back-off when a 502-504 says
 * nothing; and after a connection that failed or dropped, or an answer that never came, with
 * a jittered back-off. A removal whose earlier try may have been applied unheard (no answer,
 * or 502-504) and whose repeat meets the 404 of the thing removed is answered 204. A refusal
 * it answers has a problem body (`asProblem`); a successful answer that is not JSON throws
 * UnexpectedAnswer. */
export async function patientFetch(given: Request): Promise<Response> {
  const request = keyed(given);
  let unsure = false;
  for (let tries = 1; ; tries += 1) {
    let response: Response;
    try {
      response = await attempt(request);
    } catch (error) {
      if (request.signal.aborted || !resendable(request) || tries === ATTEMPTS) throw error;
      unsure = true;
      waited.resent += 1;
      await pause(backoffMs(tries), request.signal);
      continue;
    }
    if (unsure && (await isGone(request, response))) {
      return new Response(null, { status: 204, statusText: "No Content" });
    }
    const unavailable = UNAVAILABLE.includes(response.status);
    unsure ||= unavailable;
    const refused = response.status === 429 || (unavailable && resendable(request));
    const told = response.status === 429 || response.headers.has("Retry-After");
    const wait = told ? retryAfterMs(response) : backoffMs(tries);
    if (!refused || tries === ATTEMPTS || wait > MAX_WAIT_MS) return checked(response);
    // attempt() read any other answer whole: only a stream's refusal still holds its connection
    await response.body?.cancel();
    waited.count += 1;
    await pause(wait, request.signal);
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
