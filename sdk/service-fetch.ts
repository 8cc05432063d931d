import { SpecwrightTransportError } from './client-errors.ts';

/** The service's origin, named in errors. The url is never echoed: a key pasted in the wrong place would end up in the error. */
export function originOf(url: string): string {
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
  return parsed.origin;
}

/**
 * fetch, with every answer that is not the service's told apart: a connection that fails, or an
 * answer that is not tRPC's JSON (a proxy's HTML error page, a 431 without a body), rejects with a
 * SpecwrightTransportError naming the status, instead of a JSON parse error that names nothing.
 * Only the origin is named: a query's URL carries its input.
 */
export function serviceAnswersOnly(fetchImpl: typeof globalThis.fetch | undefined, origin: string): typeof globalThis.fetch {
  return async (input, init) => {
    const aborted = () => init?.signal?.aborted === true;
    let response: Response;
    try {
      // Looked up per call, as tRPC does: a fetch installed after the client was made is used.
      response = await (fetchImpl ?? globalThis.fetch)(input, init);
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
      throw new SpecwrightTransportError(
        `${origin} answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} ${type ? `with ${type.split(';')[0]}` : 'with no content type'}, which is not the service's answer: ` +
          `a proxy in between refused or failed the call, or url is not the service's base URL (http(s)://host[:port], without /api or /trpc)`,
        response.status,
      );
    }
    // A new Response, without the request's URL: tRPC keeps the response on the error a call throws
    // (`error.meta.response`), so logging that error would print a query's input (an invitation token).
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
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

/** One call's answer as tRPC writes it: `{result}` or `{error: {code: <number>, message}}`. */
function isCallAnswer(value: unknown): boolean {
  if (!isObject(value)) return false;
  if (isObject(value.result)) return true;
  return isObject(value.error) && typeof value.error.code === 'number' && typeof value.error.message === 'string';
}

/** A call's answer, a batch's (one per call), or a whole batch refused at once (one error). */
function isTrpcAnswer(value: unknown): boolean {
  return Array.isArray(value) ? value.length > 0 && value.every(isCallAnswer) : isCallAnswer(value);
}
