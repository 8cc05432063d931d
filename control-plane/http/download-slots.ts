/**
 * How many downloads are served at once, overall and per client address. A download holds its
 * bundle in memory (up to the 8 MiB a run may produce) until the client has read it, and a
 * database connection while reading it; without a bound, a few hundred downloads left unread held
 * gigabytes and starved every other request of connections. The total stays below the API's 10
 * database connections, so downloads never hold them all.
 */
export const DOWNLOAD_SLOTS = { total: 6, perAddress: 2 } as const;

export type DownloadSlot = { release: () => void } | { refused: 'address' | 'total' };

export function createDownloadSlots(limits: { total: number; perAddress: number } = DOWNLOAD_SLOTS) {
  let inUse = 0;
  const byAddress = new Map<string, number>();
  return {
    /** Takes a slot for `address`, or says which bound refused it; `release` may be called more than once. */
    take(address: string): DownloadSlot {
      const held = byAddress.get(address) ?? 0;
      if (held >= limits.perAddress) return { refused: 'address' };
      if (inUse >= limits.total) return { refused: 'total' };
      inUse += 1;
      byAddress.set(address, held + 1);
      let released = false;
      return {
        release: () => {
          if (released) return;
          released = true;
          inUse -= 1;
          const left = (byAddress.get(address) ?? 1) - 1;
          if (left === 0) byAddress.delete(address);
          else byAddress.set(address, left);
        },
      };
    },
  };
}
