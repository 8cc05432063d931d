/**
 * Warm isolates, keyed by (tenant, kit version). A sandbox is lent to one run at a time, so runs
 * never queue behind each other inside one isolate and a run's limits measure only its own work.
 * The tenant is part of the key because an isolate is the boundary between kits' memory: two
 * tenants running the same kit version still get different isolates.
 */
import type { KitPackage } from '../kit-package.ts';
import type { KitLimits } from '../limits.ts';
import { KitSandbox } from './kit-sandbox.ts';

export type IsolatePoolOptions = {
  /** Idle isolates kept in all; the least recently used is disposed beyond this. */
  maxIdle: number;
  /** Idle isolates kept per (tenant, kit version), for concurrent runs of the same kit. */
  maxIdlePerKey: number;
  /** An isolate idle for longer than this is disposed at the next acquire or release. */
  idleTimeoutMs: number;
};

export const DEFAULT_POOL_OPTIONS: Readonly<IsolatePoolOptions> = Object.freeze({
  maxIdle: 64,
  maxIdlePerKey: 4,
  idleTimeoutMs: 10 * 60 * 1000,
});

export type IsolatePoolStats = { created: number; disposed: number; idle: number; busy: number };

type IdleSandbox = { sandbox: KitSandbox; since: number };

export class IsolatePool {
  readonly #limits: KitLimits;
  readonly #options: IsolatePoolOptions;
  // Map iteration order is insertion order: the first key holds the least recently released.
  readonly #idle = new Map<string, IdleSandbox[]>();
  readonly #busy = new Map<KitSandbox, string>();
  #created = 0;
  #disposed = 0;
  #closed = false;

  constructor(limits: KitLimits, options: Partial<IsolatePoolOptions> = {}) {
    this.#limits = limits;
    this.#options = { ...DEFAULT_POOL_OPTIONS, ...options };
  }

  async acquire(tenantId: string, kit: KitPackage, deadline: number): Promise<KitSandbox> {
    if (this.#closed) throw new Error('kit runtime is closed');
    this.#evictExpired();
    const key = poolKey(tenantId, kit);
    const idle = this.#idle.get(key) ?? [];
    while (idle.length > 0) {
      const { sandbox } = idle.pop() as IdleSandbox;
      // Same ref with other content means a version was re-published; never serve stale templates.
      if (sandbox.healthy && sandbox.fingerprint === kit.fingerprint) {
        this.#busy.set(sandbox, key);
        return sandbox;
      }
      this.#dispose(sandbox);
    }
    this.#idle.delete(key);
    const sandbox = await KitSandbox.create(kit, this.#limits, deadline);
    this.#created++;
    this.#busy.set(sandbox, key);
    return sandbox;
  }

  release(sandbox: KitSandbox): void {
    const key = this.#busy.get(sandbox);
    this.#busy.delete(sandbox);
    if (key === undefined || this.#closed || !sandbox.healthy) {
      this.#dispose(sandbox);
      return;
    }
    const idle = this.#idle.get(key) ?? [];
    this.#idle.delete(key);
    idle.push({ sandbox, since: Date.now() });
    while (idle.length > this.#options.maxIdlePerKey) this.#dispose((idle.shift() as IdleSandbox).sandbox);
    this.#idle.set(key, idle);
    this.#evictBeyondCapacity();
  }

  stats(): IsolatePoolStats {
    let idle = 0;
    for (const list of this.#idle.values()) idle += list.length;
    return { created: this.#created, disposed: this.#disposed, idle, busy: this.#busy.size };
  }

  /** Disposes idle isolates now and busy ones as their runs finish. */
  close(): void {
    this.#closed = true;
    for (const list of this.#idle.values()) for (const { sandbox } of list) this.#dispose(sandbox);
    this.#idle.clear();
  }

  #evictExpired(): void {
    const cutoff = Date.now() - this.#options.idleTimeoutMs;
    for (const [key, list] of this.#idle) {
      const fresh = list.filter(({ sandbox, since }) => (since >= cutoff ? true : (this.#dispose(sandbox), false)));
      if (fresh.length === 0) this.#idle.delete(key);
      else this.#idle.set(key, fresh);
    }
  }

  #evictBeyondCapacity(): void {
    let idle = this.stats().idle;
    for (const [key, list] of this.#idle) {
      if (idle <= this.#options.maxIdle) break;
      while (list.length > 0 && idle > this.#options.maxIdle) {
        this.#dispose((list.shift() as IdleSandbox).sandbox);
        idle--;
      }
      if (list.length === 0) this.#idle.delete(key);
    }
  }

  #dispose(sandbox: KitSandbox): void {
    sandbox.dispose();
    this.#disposed++;
  }
}

function poolKey(tenantId: string, kit: KitPackage): string {
  return JSON.stringify([tenantId, kit.ref]);
}
