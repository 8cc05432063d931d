import { createTRPCClient, httpBatchLink, httpLink, splitLink, TRPCClientError } from '@trpc/client';
import type { AppRouter } from '../control-plane/router.ts';

export interface SpecwrightClientOptions {
  /** Where the service runs, e.g. http://127.0.0.1:3000 (no trailing /trpc). */
  url: string;
  apiKey?: string;
  bearerToken?: string;
  /** Platform admins only: act in another tenant. */
  tenantId?: string;
  fetch?: typeof globalThis.fetch;
}

const MAX_BATCH_URL_LENGTH = 8_000;
const MAX_BATCH_ITEMS = 50;

/**
 * A client whose procedures, inputs and outputs are inferred from the server's router type; no
 * code generation. `client.me.get.query()`, `client.apiKeys.create.mutate({ name })`, …
 */
export function createSpecwrightClient(options: SpecwrightClientOptions) {
  const headers: Record<string, string> = {};
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.bearerToken) headers.authorization = `Bearer ${options.bearerToken}`;
  if (options.tenantId) headers['x-tenant-id'] = options.tenantId;
  const url = `${options.url.replace(/\/+$/, '')}/trpc`;
  const fetchOption = options.fetch ? { fetch: options.fetch } : {};
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        // Mutations go one per request. A batch POST carries every call's input in one body, and the
        // server reads a body whole up to its limit: four calls each well under it would, together,
        // all fail PAYLOAD_TOO_LARGE. Alone, each keeps the limit it has (and `kits.publish` the
        // upload limit the server grants it only when called on its own).
        condition: (operation) => operation.type === 'mutation',
        true: httpLink({ url, headers, ...fetchOption }),
        false: httpBatchLink({
          url,
          headers,
          // Queries made together go out together, in batches the server reads whole: a batch's
          // inputs travel in its URL, and Node refuses request heads over 16 KiB (431, no body).
          maxURLLength: MAX_BATCH_URL_LENGTH,
          maxItems: MAX_BATCH_ITEMS,
          ...fetchOption,
        }),
      }),
    ],
  });
}

export type SpecwrightClient = ReturnType<typeof createSpecwrightClient>;

/** The catalog code (NOT_FOUND, VALIDATION_ERROR, …) of a failed call, if it is one of ours. */
export function errorCodeOf(error: unknown): string | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const data = (error as TRPCClientError<AppRouter>).data as { code?: string } | undefined;
  return data?.code;
}

export type { AppRouter };
