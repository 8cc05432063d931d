import Handlebars from 'handlebars';
import type { CompiledSpec } from '../specifications/specifications.schema.ts';
import type { definitionOfDone } from './export-contents.ts';

// Markdown, not HTML: nothing is HTML-escaped; a value that would break the layout (a line break in
// a list item) is folded by `oneLine`. The templates are the service's own, never a caller's.
const handlebars = Handlebars.create();
handlebars.registerHelper('oneLine', (value: unknown) => (value === null || value === undefined ? '—' : String(value).replace(/\s*[\r\n]+\s*/g, ' ')));
handlebars.registerHelper('join', (values: unknown) => (Array.isArray(values) && values.length > 0 ? values.map((value) => String(value).replace(/\s*[\r\n]+\s*/g, ' ')).join(', ') : '—'));
handlebars.registerHelper('ordinal', (index: number) => index + 1);
const compile = (template: string) => handlebars.compile(template, { noEscape: true, strict: false });

const specTemplate = compile(`# {{oneLine metadata.title}}

Specification version {{metadata.version}} ({{metadata.format}}), compiled in phase {{metadata.compiledFromPhase}} by {{metadata.generator}}.

## Overview

- Problem: {{oneLine overview.problem}}
- Description: {{oneLine overview.description}}
- Audience: {{join overview.audience}}
- Platforms: {{join overview.platforms}}
- Capabilities: {{join overview.capabilities}}
- Integrations: {{join overview.integrations}}

## Entities
{{#each entities}}
### {{oneLine name}} (\`{{path}}\`)

- Fields: {{#each fields}}{{name}} ({{type}}{{#if required}}, required{{/if}}){{#unless @last}}, {{/unless}}{{/each}}
- Operations: {{join operations}}
{{else}}
None named.
{{/each}}

## Endpoints
{{#each endpoints}}
- \`{{method}} {{path}}\` — {{oneLine summary}} ({{oneLine source}})
{{else}}
None.
{{/each}}

## Workflows
{{#each workflows}}
### {{oneLine name}}
{{#each steps}}
{{ordinal @index}}. {{oneLine this}}
{{/each}}
{{else}}
None.
{{/each}}

## Requirements
{{#each requirements}}
- **{{id}}** ({{kind}}, {{priority}}) {{oneLine title}}: {{oneLine description}}
{{else}}
None.
{{/each}}

## Architecture

- Style: {{oneLine architecture.style}}
- Patterns: {{join architecture.patterns}}
- Multi-tenant: {{#if architecture.multiTenant}}yes{{else}}no{{/if}}
- Timeline: {{oneLine architecture.timeline}}
- Team size: {{oneLine architecture.teamSize}}
- Release strategy: {{oneLine architecture.releaseStrategy}}
- Milestones: {{join architecture.milestones}}

## Design system
{{#if designSystem}}
- Visual style: {{oneLine designSystem.visualStyle}}
- Brand colours: {{oneLine designSystem.brandColors}}
- Accessibility: {{oneLine designSystem.accessibility}}
{{else}}
None: the product has no user interface.
{{/if}}
`);

const dodTemplate = compile(`# Definition of done

{{#each overall}}
- {{oneLine this}}
{{/each}}

## By requirement
{{#each requirements}}
### {{requirementId}} {{oneLine title}} ({{priority}})
{{#each doneWhen}}
- [ ] {{oneLine this}}
{{/each}}
{{/each}}
`);

const testPlanTemplate = compile(`# Test plan
{{#each testCases}}
- **{{id}}** (for {{requirementId}}) {{oneLine title}} — expected: {{oneLine expected}}
{{else}}

No test cases: compile the specification with includeTestPlan.
{{/each}}
`);

const taskGraphTemplate = compile(`# Task graph
{{#each tasks}}
- **{{id}}** {{oneLine title}}{{#if dependsOn.length}} — after {{join dependsOn}}{{/if}}
{{/each}}
`);

const runbookTemplate = compile(`# Runbook

Release strategy: {{oneLine strategy}}
{{#each steps}}
{{ordinal @index}}. {{oneLine this}}
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
