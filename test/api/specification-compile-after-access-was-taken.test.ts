import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowWalker } from '../helpers/flow-walk.ts';
import { call, type ApiResponse } from '../helpers/http.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { lockTableUntilReleased } from '../helpers/table-lock-gate.ts';
import { createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A compile by a member who is removed while it is under way: it has read the caller's standing and
 * waits on flow_questions (held by the test) when the removal comes. Either the removal waits for
 * the compile (which then lands while the caller still had access), or the removal answers first
 * and the compile must not land after it — no specification, no job.
 */
let app: TestApp;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const outcome = (response: ApiResponse) => `${response.status}${response.body?.error ? ` ${response.body.error.code}` : ''}`;

beforeAll(async () => {
  app = await startTestApp();
}, 120_000);
afterAll(() => app?.stop());

describe('a compile whose caller is removed while it is under way', () => {
  it('never lands after the removal has answered', async () => {
    const { apiKey, tenantId, organizationId } = app.bootstrap;
    const { projectId } = await flowWalker(app, apiKey, organizationId).startedProject('Compiled by a leaver');
    const leaver = await createUserInTenant(app, sqlAsOwner, tenantId, 'Lee');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')`, [tenantId, organizationId, leaver.userId]);
    const written = async () => [
      await countRows(app.database.ownerUrl, 'specifications where project_id = $1', [projectId]),
      await countRows(app.database.ownerUrl, "graphile_worker.jobs where task_identifier = 'specifications.compile'"),
    ];
    const before = await written();

    const gate = await lockTableUntilReleased(app.database.ownerUrl, 'flow_questions');
    const order: string[] = [];
    try {
      const compiling = call(app.url, '/api/specification/compile', { apiKey: leaver.apiKey, body: { projectId } }).then((response) => (order.push(`compile ${outcome(response)}`), response));
      await gate.untilWaitedOn('the compile waits on flow_questions');
      const removing = call(app.url, `/api/organizations/${organizationId}/members/${leaver.userId}`, { apiKey, method: 'DELETE' }).then(
        (response) => (order.push(`removal ${outcome(response)}`), response),
      );
      // The removal either answers now or waits for the compile in flight.
      await Promise.race([removing, untilLockWaiters(app.database.ownerUrl, 2)]);
      const removedFirst = order.includes('removal 200');
      await gate.release();
      const [compiled, removed] = await Promise.all([compiling, removing]);
      expect(removed.status, removed.text).toBe(200);
      if (removedFirst) {
        expect(order).toEqual(['removal 200', 'compile 404 NOT_FOUND']);
        expect(await written()).toEqual(before);
      } else {
        expect(compiled.status, compiled.text).toBe(202);
        expect(await written()).toEqual([before[0]! + 1, before[1]! + 1]);
      }
    } finally {
      await gate.release();
    }
  });
});
