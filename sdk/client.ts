import { createTRPCClient, httpBatchLink, httpLink, splitLink, TRPCClientError, type TRPCLink } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { observable } from '@trpc/server/observable';
import type { AppRouter } from '../control-plane/router.ts';
import { serviceAnswersOnly, serviceUrlOf } from './service-fetch.ts';

export interface SpecwrightClientOptions {
  /** Where the service runs, e.g. http://127.0.0.1:3000 (no trailing /trpc). */
  url: string;
  apiKey?: string;
  bearerToken?: string;
  /** Platform admins only: act in another tenant. */
  tenantId?: string;
  fetch?: typeof globalThis.fetch;
}

/** Every procedure's input, e.g. `RouterInputs['projects']['create']`. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** Every procedure's output as it arrives (times are ISO strings), e.g. `RouterOutputs['projects']['get']`. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;

const MAX_BATCH_URL_LENGTH = 8_000;
const MAX_BATCH_ITEMS = 50;

/**
 * A client whose procedures, inputs and outputs are inferred from the server's router type; no
 * code generation. `client.me.get.query()`, `client.apiKeys.create.mutate({ name })`, …
 * A call sends its own X-Request-ID, to trace it end to end, with
 * `client.projects.get.query(input, { context: { requestId: 'deploy-42' } })` (1–128 of
 * `A-Z a-z 0-9 . _ : -`); a failure's `serviceErrorOf(error).requestId` names it either way.
 */
export function createSpecwrightClient(options: SpecwrightClientOptions) {
  const headers: Record<string, string> = {};
  if (options.apiKey && options.bearerToken) throw new TypeError('pass apiKey or bearerToken, not both: the service refuses a request that carries two credentials');
  if (options.apiKey) headers['x-api-key'] = headerSafe(options.apiKey, 'apiKey');
  if (options.bearerToken) headers.authorization = `Bearer ${headerSafe(options.bearerToken, 'bearerToken')}`;
  if (options.tenantId) headers['x-tenant-id'] = headerSafe(options.tenantId, 'tenantId');
  const service = serviceUrlOf(options.url);
  const url = `${service.base}/trpc`;
  const serviceFetch = serviceAnswersOnly(options.fetch, service.origin);
  return createTRPCClient<AppRouter>({
    links: [
      endsOnItsOwnSignal,
      splitLink({
        // Mutations go one per request. A batch POST carries every call's input in one body, and the
        // server reads a body whole up to its limit: four calls each well under it would, together,
        // all fail PAYLOAD_TOO_LARGE. Alone, each keeps the limit it has (and `kits.publish` the
        // upload limit the server grants it only when called on its own).
        // A call with its own request id goes alone too: a batch carries one X-Request-ID.
        condition: (operation) => operation.type === 'mutation' || operation.context.requestId !== undefined,
        true: httpLink({ url, headers: ({ op }) => withRequestId(headers, op.context.requestId), fetch: serviceFetch }),
        false: httpBatchLink({
          url,
          headers,
          // Queries made together go out together, in batches the server reads whole: a batch's
          // inputs travel in its URL, and Node refuses request heads over 16 KiB (431, no body).
          maxURLLength: MAX_BATCH_URL_LENGTH,
          maxItems: MAX_BATCH_ITEMS,
          fetch: serviceFetch,
        }),
      }),
    ],
  });
}

export type SpecwrightClient = ReturnType<typeof createSpecwrightClient>;

/**
 * A call whose `signal` aborts (`AbortSignal.timeout(ms)`) rejects at once. tRPC cancels a batch's
 * request only when every call in it is aborted; until then an aborted call would wait for the
 * batch and resolve with its answer, however long that took.
 */
const endsOnItsOwnSignal: TRPCLink<AppRouter> = () => ({ op, next }) =>
  observable((observer) => {
    // What an aborted fetch rejects with: the signal's reason, so a timeout (TimeoutError) is told
    // from a cancel (AbortError).
    const abort = () => observer.error(TRPCClientError.from(abortReasonOf(op.signal)));
    if (op.signal?.aborted) return abort();
    op.signal?.addEventListener('abort', abort, { once: true });
    const call = next(op).subscribe(observer);
    return () => {
      op.signal?.removeEventListener('abort', abort);
      call.unsubscribe();
    };
  });

function abortReasonOf(signal: AbortSignal | null | undefined): Error {
  return signal?.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
}

/**
 * A credential as it can travel in a header. Surrounding whitespace is dropped, as fetch does (a key
 * read from a CRLF .env file ends in \r); any other control or non-ASCII character would make fetch
 * refuse the header with an error quoting it, so it is refused here, in words that do not show it.
 */
function headerSafe(value: string, option: string): string {
  const trimmed = value.trim();
  if (/[^\x20-\x7e]/.test(trimmed)) {
    throw new TypeError(`${option} contains a control or non-ASCII character, which no credential has (the value is not shown); check how it was copied`);
  }
  return trimmed;
}

/** What the service takes as a caller's X-Request-ID; it replaces anything else with one of its own. */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function withRequestId(headers: Record<string, string>, requestId: unknown): Record<string, string> {
  if (requestId === undefined) return headers;
  if (typeof requestId !== 'string' || !ACCEPTABLE_REQUEST_ID.test(requestId)) {
    throw new TypeError('context.requestId must be 1–128 of A-Z a-z 0-9 . _ : - (the service would replace it with one of its own)');
  }
  return { ...headers, 'x-request-id': requestId };
}

export type { AppRouter };
