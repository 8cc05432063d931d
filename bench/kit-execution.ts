// Benchmark: a kit of 100 Handlebars outputs executed end to end by the worker (claim, sandboxed
// render and validation, bundle, outputs stored), measured from the execution's own timestamps,
// against compiling and rendering the same 100 templates in-process with plain Handlebars.
// Targets: a warm execution ≤ 2× the plain render; the second execution ≤ 0.25× the first.
//
//   node --no-node-snapshot bench/kit-execution.ts
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Handlebars from 'handlebars';
import { loadConfig } from '../control-plane/config.ts';
import { startService } from '../control-plane/service.ts';
import { atMost, medianMs, report } from './measure.ts';

const OUTPUTS = 100;
const template = (i: number) => `# Module ${i} for {{businessProfile.company.name}}\n\n{{#each discoveryAnswers.entities}}- {{this}} ({{@index}})\n{{/each}}\nIndustry: {{businessProfile.company.industry}}\n`;
const files: Record<string, string> = {};
const outputs = Array.from({ length: OUTPUTS }, (_, i) => {
  files[`templates/m${i}.md.hbs`] = template(i);
  return { id: `m${i}`, filename: `docs/m${i}.md`, template: `templates/m${i}.md.hbs`, outputType: 'markdown' };
});
const manifest = {
  metadata: { id: 'hundred-docs', displayName: '100 docs', version: '1.0.0', description: 'benchmark kit', author: 'bench', kitType: 'file' },
  platform: { name: 'docs', category: 'documentation' },
  phases: ['PLAN', 'VALIDATE'],
  outputs,
  discovery: { pools: [] },
};
const input = { businessProfile: { company: { name: 'Acme', industry: 'rockets' } }, discoveryAnswers: { entities: ['Rocket', 'Launch', 'Pad', 'Crew'] } };

// A whole PostgreSQL cluster (tens of MB): removed when the run ends.
const dataDir = await mkdtemp(join(tmpdir(), 'specwright-bench-kit-'));
const service = await startService(
  loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_GENERAL_PER_MINUTE: '100000' }),
  { mode: 'all' },
);
async function measure() {
  const { apiKey, organizationId } = service.firstRun.bootstrap!;
  const api = async (path: string, body?: unknown) => {
    const response = await fetch(`${service.url}/api${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    const parsed = (await response.json()) as { success: boolean; data: any; error?: unknown };
    if (!parsed.success) throw new Error(`${path}: ${JSON.stringify(parsed.error)}`);
    return parsed.data;
  };
  await api(`/${organizationId}/kits`, { manifest, files });
  const projectId = (await api('/projects', { name: 'Bench' })).id;

  /** Runs one execution and returns the worker's time for it (started_at → completed_at). */
  async function workerMs(): Promise<number> {
    const { executionId } = await api(`/${organizationId}/kits/hundred-docs/execute`, { projectId, ...input });
    for (;;) {
      const execution = await api(`/${organizationId}/kits/executions/${executionId}`);
      if (execution.status === 'completed') return new Date(execution.completedAt).getTime() - new Date(execution.startedAt).getTime();
      if (execution.status !== 'pending' && execution.status !== 'running') throw new Error(`execution ${execution.status}: ${execution.errorMessage}`);
      await sleep(5);
    }
  }

  const first = await workerMs();
  const second = await workerMs();
  const warm: number[] = [];
  for (let i = 0; i < 7; i += 1) warm.push(await workerMs());
  warm.sort((a, b) => a - b);
  const warmMs = warm[Math.floor(warm.length / 2)]!;

  // The baseline: the same templates compiled and rendered with Handlebars in this process.
  const plainRender = () => {
    const handlebars = Handlebars.create();
    for (let i = 0; i < OUTPUTS; i += 1) handlebars.compile(files[`templates/m${i}.md.hbs`]!)(input);
  };
  for (let i = 0; i < 5; i += 1) plainRender();
  const plainMs = await medianMs(20, plainRender);
  return { first, second, warmMs, plainMs };
}

// The service is stopped whatever happens, or its PostgreSQL (a process group of its own) would outlive the run.
const { first, second, warmMs, plainMs } = await measure().finally(async () => {
  await service.stop();
  await rm(dataDir, { recursive: true, force: true });
});
await report(
  'kit-execution',
  [atMost('warm execution vs plain Handlebars', warmMs / plainMs, 2), atMost('second execution vs first', second / first, 0.25)],
  { firstMs: first, secondMs: second, warmMs, plainMs, note: 'execution times come from the database timestamps, millisecond resolution' },
);
