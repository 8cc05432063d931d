import { retryAfterSecondsIn, SpecwrightTransportError } from './client-errors.ts';

/**
 * The service's base URL as parsed (origin and path, without a trailing slash, to put `/trpc` after) and its
 * origin, named in errors. The url is never echoed: a key pasted in the wrong place would end up in
 * the error. The base is the parsed URL, not the string given: whitespace around it (a .env line
 * ending in a space) would otherwise make every request's URL invalid, and fetch's error quotes that
 * URL whole, a query's input (an invitation token) included.
 */
export function serviceUrlOf(url: string): { base: string; origin: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError('url is not a URL (expected http(s)://host[:port])');
  }
  // `localhost:3000` parses, as a URL of scheme `localhost:`, and every call would fail "cannot reach null".
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TypeError('url must start with http:// or https:// (expected http(s)://host[:port])');
  // fetch refuses such a URL, in an error quoting it whole, password included.
  if (parsed.username || parsed.password) throw new TypeError('url carries a user name or password, which fetch refuses (the value is not shown); pass apiKey or bearerToken instead');
  // `/trpc/<procedure>` would land inside the query (`?x=1/trpc/me.get`) or the fragment, never on a procedure.
  if (parsed.search || parsed.hash) throw new TypeError("url carries a query or a fragment (the value is not shown); pass the service's base URL (expected http(s)://host[:port])");
  // The service answers `/trpc/trpc/projects.get` NOT_FOUND: every call would look like a missing record.
  if (/\/trpc\/*$/i.test(parsed.pathname)) throw new TypeError("url ends in /trpc; pass the service's base URL (expected http(s)://host[:port], without /trpc)");
  return { base: `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, ''), origin: parsed.origin };
}

/**
 * fetch, with every answer that is not the service's told apart: a connection that fails, or an
 * answer that is not tRPC's JSON (a proxy's HTML error page, a 431 without a body), rejects with a
 * SpecwrightTransportError naming the status (and the Retry-After a proxy's 429 or 503 asks for),
 * instead of a JSON parse error that names nothing. Only the origin is named: a query's URL carries
 * its input. Redirects are not followed: fetch would send X-API-Key on to wherever one points, and
 * turn a mutation's POST into a GET.
 */
export function serviceAnswersOnly(fetchImpl: typeof globalThis.fetch | undefined, origin: string): typeof globalThis.fetch {
  return async (input, init) => {
    const aborted = () => init?.signal?.aborted === true;
    let response: Response;
    try {
      // Looked up per call, as tRPC does: a fetch installed after the client was made is used.
      response = await (fetchImpl ?? globalThis.fetch)(input, { ...init, redirect: 'manual' });
    } catch (error) {
      if (aborted()) throw error;
      throw new SpecwrightTransportError(`cannot reach ${origin}${causeCodeOf(error)}`, null, { cause: error });
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      if (aborted()) throw error;
      throw new SpecwrightTransportError(`${origin} closed the connection in the middle of its answer (HTTP ${response.status})`, response.status, { cause: error });
    }
    if (!isTrpcAnswer(parsedOrUndefined(text))) {
      const type = response.headers.get('content-type');
      const retryAfterSeconds = retryAfterSecondsIn(response.headers);
      const answered = `${origin} answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
      const redirect = redirectOriginOf(response, origin);
      throw new SpecwrightTransportError(
        redirect
          ? `${answered}, a redirect to ${redirect}, which the client does not follow (it would take the credentials along); pass the service's own base URL as url`
          : `${answered} ${type ? `with ${type.split(';')[0]}` : 'with no content type'}${retryAfterSeconds === undefined ? '' : ` (Retry-After: ${retryAfterSeconds} s)`}, which is not the service's answer: ` +
              `a proxy in between refused or failed the call, or url is not the service's base URL (http(s)://host[:port], without /api or /trpc)`,
        response.status,
        { retryAfterSeconds },
      );
    }
    // A new Response, without the request's URL: tRPC keeps the response on the error a call throws
    // (`error.meta.response`), so logging that error would print a query's input (an invitation token).
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** Where a redirect points, by origin alone: its Location may repeat the query, input included. */
function redirectOriginOf(response: Response, origin: string): string | undefined {
  const location = response.status >= 300 && response.status < 400 ? response.headers.get('location') : null;
  if (!location) return undefined;
  try {
    return new URL(location, origin).origin;
  } catch {
    return 'an address that is not a URL';
  }
}

function causeCodeOf(error: unknown): string {
  const code = (error as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === 'string' ? ` (${code})` : '';
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One call's answer as the service writes it: `{result}` or `{error: {code: <number>, message, data: {code}}}`.
 * A gateway's own JSON error (`{"error": {"code": 503, "message": …}}`) has tRPC's shape too; only
 * the service's carries a catalog code.
 */
function isCallAnswer(value: unknown): boolean {
  if (!isObject(value)) return false;
  if (isObject(value.result)) return true;
  const { error } = value;
  return isObject(error) && typeof error.code === 'number' && typeof error.message === 'string' && isObject(error.data) && typeof error.data.code === 'string';
}

/** A call's answer, a batch's (one per call), or a whole batch refused at once (one error). */
function isTrpcAnswer(value: unknown): boolean {
  return Array.isArray(value) ? value.length > 0 && value.every(isCallAnswer) : isCallAnswer(value);
}
