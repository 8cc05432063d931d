import { describe, expect, it } from 'vitest';
import { featureCandidates } from '../flow/flow-derivations.ts';
import { questionCatalogue } from '../flow/flow-catalogue.ts';
import { compileSpecification, type CompileAnswer } from '../specifications/compile-specification.ts';
import type { CompiledSpec } from '../specifications/specifications.schema.ts';
import { definitionOfDone } from './export-contents.ts';
import { markdownOf } from './export-markdown.ts';

/**
 * The Markdown of an export pack, read as a viewer renders it. A value comes from a user's answers
 * (an entity named with a backtick, an HTML tag) or from a model drafting a section (a field name
 * or an endpoint with a line break): it stays text on its own line, and never opens a code span,
 * emphasis, a link or HTML that swallows what follows.
 */
const PROJECT = { id: '0b0e7c39-4a9f-4c1e-9d3a-2f6f2f0a1b2c', name: 'Clinic <details> bookings', description: null };

function compiled(entities: string): CompiledSpec {
  const answers: CompileAnswer[] = [];
  const byKey = new Map<string, { value: unknown; confidence: number | null }>();
  for (const [key, value] of [['problem', 'Patients *cannot* book'], ['entities', entities], ['features', ['manage-patient']]] as const) {
    const question = questionCatalogue.find((candidate) => candidate.key === key)!;
    const options = key === 'features' ? featureCandidates(byKey as never) : (question.options ?? []);
    const chosen = Array.isArray(value) ? value : null;
    byKey.set(key, { value, confidence: 0.9 });
    answers.push({ key, value: value as never, confidence: 0.9, labels: chosen && chosen.map((choice) => options.find((option) => option.value === choice)?.label ?? choice) });
  }
  return compileSpecification({ project: PROJECT, phase: 'SPECIFICATION', answers, unanswered: [] }, { format: 'v2', includeTestPlan: true, includeTaskGraph: true, includeRunbook: true }, 1).spec as CompiledSpec;
}

describe('export Markdown of hostile values', () => {
  it('keeps a name with a backtick, HTML or emphasis as literal text, and the path beside it a code span', () => {
    const spec = compiled('patient, Re`port <!-- x, <details>, *star*');
    const markdown = markdownOf.spec(spec);
    const headings = markdown.split('\n').filter((line) => line.startsWith('### ') && line.includes('(`'));
    // Every special character of a name is escaped, so a renderer shows it as typed.
    expect(headings).toContain('### Re\\`port \\<!-- x (`/re-port-xes`)');
    expect(headings).toContain('### \\<details\\> (`/details`)');
    expect(headings).toContain('### \\*star\\* (`/stars`)');
    expect(markdown).toMatch(/^# Clinic \\<details\\> bookings\n/);
    expect(markdown).toContain('- Problem: Patients \\*cannot\\* book');
    // No raw HTML tag is left anywhere in the document.
    expect(markdown).not.toMatch(/(^|[^\\])<[A-Za-z!/]/m);
  });

  it('keeps a drafted field, endpoint or requirement id with a line break on its own line', () => {
    const spec = compiled('patient');
    const drafted: CompiledSpec = {
      ...spec,
      entities: [{ ...spec.entities[0]!, path: '/pa`tients\n# Injected', fields: [{ name: 'id\n# Injected', type: 'uuid\n\n---', required: true }] }],
      endpoints: [{ method: 'GET\n# Injected', path: '/patients``', summary: 'List', source: 'patient' }],
      requirements: [{ ...spec.requirements[0]!, id: 'FR-001\n# Injected' }],
      testCases: [{ id: 'TC-001\n# Injected', requirementId: 'FR-001\n# Injected', title: 'Lists', expected: 'A list' }],
      taskGraph: { tasks: [{ id: 'T1\n# Injected', title: 'Model', dependsOn: [] }] },
    };
    const documents = [
      markdownOf.spec(drafted),
      markdownOf.dod(definitionOfDone(drafted)),
      markdownOf.testPlan({ testCases: drafted.testCases }),
      markdownOf.taskGraph(drafted.taskGraph!),
    ];
    for (const document of documents) {
      expect(document).not.toMatch(/^# Injected/m);
      expect(document).not.toMatch(/^---/m);
    }
    // A code span holding backticks is fenced by a longer run of them.
    expect(documents[0]).toContain('- ``` GET # Injected /patients`` ``` — List (patient)');
  });
});

describe("export Markdown of a user story's requirement", () => {
  it('lists its acceptance criteria under it, each escaped and on its own line, with or without a test plan', () => {
    const spec = compiled('patient');
    const story = {
      id: 'US-001',
      kind: 'functional' as const,
      title: 'Book <b>online</b>',
      description: 'As a *patient*',
      priority: 'could' as const,
      source: 'user-story',
      acceptanceCriteria: ['Shows `free` slots', '# Injected\n<script>x</script>', '1. [link](http://x)'],
    };
    const markdown = markdownOf.spec({ ...spec, requirements: [...spec.requirements, story], testCases: [] });
    const lines = markdown.split('\n');
    const at = lines.indexOf('- **US-001** (functional, could) Book \\<b\\>online\\</b\\>: As a \\*patient\\*');
    expect(at).toBeGreaterThan(-1);
    expect(lines.slice(at + 1, at + 4)).toEqual([
      '  - Accepted when: Shows \\`free\\` slots',
      '  - Accepted when: # Injected \\<script\\>x\\</script\\>',
      '  - Accepted when: 1. \\[link\\](http://x)',
    ]);
    expect(markdown).not.toMatch(/^# Injected/m);
    expect(markdown).not.toMatch(/(^|[^\\])<[A-Za-z!/]/m);
    // A feature's requirement has no criteria, and no line for them.
    expect(lines[lines.indexOf(lines.find((line) => line.startsWith('- **FR-001**'))!) + 1]).not.toMatch(/Accepted when/);
  });
});
