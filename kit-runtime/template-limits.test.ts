import { afterAll, describe, expect, it } from 'vitest';
import { createKitRuntime } from './kit-runtime.ts';
import { KIT_TEMPLATE_LIMITS } from './limits.ts';
import { countTemplateExpressions } from './template-depth.ts';
import { loadOrThrow } from './test-support/kits.ts';

// Default limits on purpose: a kit the package check accepts must also render under them.
const runtime = createKitRuntime();
afterAll(() => runtime.close());

describe('countTemplateExpressions', () => {
  it('counts each name, value and subexpression of a tag, and a comment once', () => {
    expect(countTemplateExpressions('plain text, no tags')).toBe(0);
    expect(countTemplateExpressions('{{name}} and {{{raw}}}')).toBe(2);
    expect(countTemplateExpressions('{{json value 2}}')).toBe(3);
    expect(countTemplateExpressions('{{a.b.c}}')).toBe(3);
    expect(countTemplateExpressions('{{#if (eq kind "a (b) c")}}x{{/if}}')).toBe(6);
    expect(countTemplateExpressions('{{!-- one {{two}} three --}}{{! four five }}')).toBe(2);
    expect(countTemplateExpressions('{{> entityList}}{{[odd name].x}}')).toBe(3);
  });

  it('stops soon after the count passes the given bound', () => {
    expect(countTemplateExpressions('{{a}}'.repeat(380_000), 5000)).toBe(5001);
  });
});

describe('templates at the expression limits', () => {
  it('render under the default run limits, the largest a kit may hold', async () => {
    const perTemplate = KIT_TEMPLATE_LIMITS.maxExpressionsPerTemplate;
    const block = '{{#each items}}{{name}} {{/each}}'; // 4 expressions
    const templates = [block.repeat(perTemplate / 4), block.repeat(perTemplate / 4), '{{json b}}\n'.repeat((KIT_TEMPLATE_LIMITS.maxExpressionsPerKit - 2 * perTemplate) / 2)];
    expect(templates.reduce((sum, t) => sum + countTemplateExpressions(t), 0)).toBe(KIT_TEMPLATE_LIMITS.maxExpressionsPerKit);
    const kit = loadOrThrow(
      {
        metadata: { id: 'large-templates', displayName: 'Large templates', version: '1.0.0', description: '', author: 'test', kitType: 'file' },
        platform: { name: 'none', category: 'test' },
        phases: ['PLAN'],
        outputs: templates.map((_, i) => ({ id: `out${i}`, filename: `out${i}.txt`, template: `templates/out${i}.hbs`, outputType: 'text' })),
        discovery: { pools: [] },
      },
      Object.fromEntries(templates.map((source, i) => [`templates/out${i}.hbs`, source])),
    );
    const result = await runtime.execute(kit, { tenantId: 'tenant-a', input: { b: 'x', items: [{ name: 'a' }, { name: 'b' }] } });
    expect(result.error).toBeNull();
    expect(result.status).toBe('completed');
    expect(result.outputs.map((o) => o.content.slice(0, 8))).toEqual(['a b a b ', 'a b a b ', '"x"\n"x"\n']);
  });
});
