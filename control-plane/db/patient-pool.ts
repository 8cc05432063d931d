import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { isDatabaseUnavailable } from './postgres-errors.ts';

type ConnectCallback = (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;

/**
 * A pool whose new connections wait out a database that is briefly away — a restart, a failover, a
 * network blip, logins switched off for maintenance — for up to `patienceMs`, retrying with backoff.
 *
 * The worker needs this: graphile-worker records a job's failure on a fresh connection and does not
 * catch that call failing, so a blip at that moment took the whole process down (API included), and
 * a job whose outcome could not be recorded would stay locked. Waiting applies only once the pool
 * has connected at least once (a database unreachable from the start is a wrong setting, reported
 * at once), and ends when the pool ends or `stopWaiting()` is called (shutdown).
 */
export class PatientPool extends pg.Pool {
  readonly patienceMs: number;
  #connectedOnce = false;
  #waiting = true;

  constructor(config: pg.PoolConfig & { patienceMs: number }) {
    const { patienceMs, ...poolConfig } = config;
    super(poolConfig);
    this.patienceMs = patienceMs;
  }

  /** From now on a connection that fails fails at once (called when the service shuts down). */
  stopWaiting(): void {
    this.#waiting = false;
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const connected = this.#connectPatiently();
    if (!callback) return connected;
    // pg-pool's own query() connects through this form.
    connected.then(
      (client) => callback(undefined, client, (release) => client.release(release as boolean | Error | undefined)),
      (error: Error) => callback(error, undefined, () => {}),
    );
  }

  async #connectPatiently(): Promise<pg.PoolClient> {
    const giveUpAt = Date.now() + this.patienceMs;
    for (let delayMs = 100; ; delayMs = Math.min(delayMs * 2, 2_000)) {
      try {
        const client = await super.connect();
        this.#connectedOnce = true;
        return client;
      } catch (error) {
        const waitable = this.#connectedOnce && this.#waiting && !this.ending && isDatabaseUnavailable(error);
        if (!waitable || Date.now() + delayMs > giveUpAt) throw error;
        await sleep(delayMs);
      }
    }
  }
}
