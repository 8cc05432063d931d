import { afterAll, describe, expect, it } from 'vitest';
import { createKitRuntime } from './kit-runtime.ts';
import { exampleInput, exampleFiles, exampleManifest, loadOrThrow } from './test-support/kits.ts';

// A YAML output the size a kit may render (40,000 keys, about 540 KB): parsing and checking it
// takes a good part of a second, on the host, outside the isolate's time limit.
function kitWithLargeYaml() {
  const manifest = exampleManifest();
  delete manifest.outputs[1]!.schema;
  const files = exampleFiles();
  files['templates/compose.yml.hbs'] = Array.from({ length: 40_000 }, (_, i) => `k${i}: ${i}`).join('\n');
  return loadOrThrow(manifest, files);
}

const strict = createKitRuntime({ limits: { timeoutMs: 10_000 }, validation: { timeoutMs: 1 } });
const usual = createKitRuntime({ limits: { timeoutMs: 10_000 } });
afterAll(() => {
  strict.close();
  usual.close();
});

describe("validating a run's outputs", () => {
  it('happens off the calling thread, under a time limit of its own: past it the run fails, and the runtime carries on', async () => {
    const kit = kitWithLargeYaml();
    const overran = await strict.execute(kit, { tenantId: 't', input: exampleInput });
    expect(overran.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'time', phase: 'RENDER', message: 'validating the outputs took longer than 0.001 s' });

    // Without a schema a YAML output is only parsed, which says so in a warning.
    const done = await usual.execute(kit, { tenantId: 't', input: exampleInput });
    expect(done.outputs.map((output) => [output.outputId, output.status])).toEqual([
      ['openapi', 'valid'],
      ['compose', 'warning'],
      ['readme', 'valid'],
    ]);
  });
});
