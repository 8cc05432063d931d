/**
 * Which requests are tRPC calls. Express matches its mounts without regard to letter case, so
 * `/TRPC/me.get` reaches the tRPC handler as surely as `/trpc/me.get`: every decision made on the
 * path (what a batch costs, what a log line may show, which error shape answers) must ignore case too.
 */
const TRPC_PROCEDURES = /^\/trpc\/([^?#]*)/i;

/** The most calls a tRPC batch may hold (the SDK's batches stay within it: sdk/client.ts); a larger one runs none. */
export const MAX_TRPC_BATCH_SIZE = 50;

/** The procedure part of a tRPC path (`/trpc/a,b?batch=1` → `a,b`), or null for any other path. */
export function trpcProceduresOf(path: string): string | null {
  return TRPC_PROCEDURES.exec(path)?.[1] ?? null;
}

export function isTrpcPath(path: string): boolean {
  return /^\/trpc(?=[/?#]|$)/i.test(path);
}
