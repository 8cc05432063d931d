import Handlebars from 'handlebars';
import type { CompiledSpec } from '../specifications/specifications.schema.ts';
import type { definitionOfDone } from './export-contents.ts';

// Markdown, not HTML: nothing is HTML-escaped. Every value is written through a helper, since a
// value is a user's answer or a model's draft: `text` folds line breaks (a heading or list item stays
// one line) and backslash-escapes what Markdown or inline HTML would read (CommonMark lets any ASCII
// punctuation be escaped so); `code` writes a code span fenced by more backticks than the value
// holds. A user story's acceptance criteria are items under its requirement, each after a fixed
// label, so none starts a line (a criterion "# …" or "1. …" stays text, not a heading or a list).
// The templates are the service's own, never a caller's.
const handlebars = Handlebars.create();
const oneLine = (value: unknown) => String(value).replace(/\s*[\r\n]+\s*/g, ' ');
const escaped = (value: unknown) => oneLine(value).replace(/[\\`*_~[\]<>&|]/g, '\\$&');
handlebars.registerHelper('text', (value: unknown) => (value === null || value === undefined ? '—' : escaped(value)));
handlebars.registerHelper('join', (values: unknown) => (Array.isArray(values) && values.length > 0 ? values.map(escaped).join(', ') : '—'));
handlebars.registerHelper('code', (...values: unknown[]) => {
  const content = oneLine(values.slice(0, -1).join(' '));
  const fence = '`'.repeat(Math.max(0, ...(content.match(/`+/g) ?? []).map((run) => run.length)) + 1);
  return fence.length > 1 || /^ | $/.test(content) ? `${fence} ${content} ${fence}` : `${fence}${content}${fence}`;
});
handlebars.registerHelper('ordinal', (index: number) => index + 1);
const compile = (template: string) => handlebars.compile(template, { noEscape: true, strict: false });

const specTemplate = compile(`# {{text metadata.title}}

Specification version {{text metadata.version}} ({{text metadata.format}}), compiled in phase {{text metadata.compiledFromPhase}} by {{text metadata.generator}}.

## Overview

- Problem: {{text overview.problem}}
- Description: {{text overview.description}}
- Audience: {{join overview.audience}}
- Platforms: {{join overview.platforms}}
- Capabilities: {{join overview.capabilities}}
- Integrations: {{join overview.integrations}}

## Entities
{{#each entities}}
### {{text name}} ({{code path}})

- Fields: {{#each fields}}{{text name}} ({{text type}}{{#if required}}, required{{/if}}){{#unless @last}}, {{/unless}}{{/each}}
- Operations: {{join operations}}
{{else}}
None named.
{{/each}}

## Endpoints
{{#each endpoints}}
- {{code method path}} — {{text summary}} ({{text source}})
{{else}}
None.
{{/each}}

## Workflows
{{#each workflows}}
### {{text name}}
{{#each steps}}
{{ordinal @index}}. {{text this}}
{{/each}}
{{else}}
None.
{{/each}}

## Requirements
{{#each requirements}}
- **{{text id}}** ({{text kind}}, {{text priority}}) {{text title}}: {{text description}}
{{#each acceptanceCriteria}}
  - Accepted when: {{text this}}
{{/each}}
{{else}}
None.
{{/each}}

## Architecture

- Style: {{text architecture.style}}
- Patterns: {{join architecture.patterns}}
- Multi-tenant: {{#if architecture.multiTenant}}yes{{else}}no{{/if}}
- Timeline: {{text architecture.timeline}}
- Team size: {{text architecture.teamSize}}
- Release strategy: {{text architecture.releaseStrategy}}
- Milestones: {{join architecture.milestones}}

## Design system
{{#if designSystem}}
- Visual style: {{text designSystem.visualStyle}}
- Brand colours: {{text designSystem.brandColors}}
- Accessibility: {{text designSystem.accessibility}}
{{else}}
None: the product has no user interface.
{{/if}}
`);

const dodTemplate = compile(`# Definition of done

{{#each overall}}
- {{text this}}
{{/each}}

## By requirement
{{#each requirements}}
### {{text requirementId}} {{text title}} ({{text priority}})
{{#each doneWhen}}
- [ ] {{text this}}
{{/each}}
{{/each}}
`);

const testPlanTemplate = compile(`# Test plan
{{#each testCases}}
- **{{text id}}** (for {{text requirementId}}) {{text title}} — expected: {{text expected}}
{{else}}

No test cases: compile the specification with includeTestPlan.
{{/each}}
`);

const taskGraphTemplate = compile(`# Task graph
{{#each tasks}}
- **{{text id}}** {{text title}}{{#if dependsOn.length}} — after {{join dependsOn}}{{/if}}
{{/each}}
`);

const runbookTemplate = compile(`# Runbook

Release strategy: {{text strategy}}
{{#each steps}}
{{ordinal @index}}. {{text this}}
{{/each}}
`);

/** Each part as Markdown (the MCP configuration stays JSON: it is what an assistant reads). */
export const markdownOf = {
  spec: (spec: CompiledSpec) => specTemplate(spec),
  dod: (dod: ReturnType<typeof definitionOfDone>) => dodTemplate(dod),
  testPlan: (plan: { testCases: CompiledSpec['testCases'] }) => testPlanTemplate(plan),
  taskGraph: (graph: NonNullable<CompiledSpec['taskGraph']>) => taskGraphTemplate(graph),
  runbook: (runbook: NonNullable<CompiledSpec['runbook']>) => runbookTemplate(runbook),
};
