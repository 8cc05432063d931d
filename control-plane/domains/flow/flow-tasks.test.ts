import { describe, expect, it } from 'vitest';
import { questionCatalogue } from './flow-catalogue.ts';
import { tasksFromAnswer } from './flow-tasks.ts';

const complianceOptions = questionCatalogue.find((question) => question.key === 'compliance')!.options ?? [];

describe('tasksFromAnswer', () => {
  it('asks for a CONNECT task per outside system named, once each whatever its spelling', () => {
    const tasks = tasksFromAnswer('integrations', 'Google   Calendar, stripe;\n Stripe ,, none', []);
    expect(tasks.map((task) => [task.origin, task.type, task.title])).toEqual([
      ['integration:google calendar', 'CONNECT', 'Connect Google Calendar'],
      ['integration:stripe', 'CONNECT', 'Connect stripe'],
    ]);
    expect(tasks[0]!.actions).toEqual([expect.objectContaining({ id: 'a1', type: 'FORM_SUBMIT' })]);
  });

  it('asks for none when the answer names none', () => {
    expect(tasksFromAnswer('integrations', 'None', [])).toEqual([]);
    expect(tasksFromAnswer('integrations', ' , ; ', [])).toEqual([]);
  });

  it('takes at most 20 systems, each name cut at 100 characters', () => {
    const tasks = tasksFromAnswer('integrations', Array.from({ length: 30 }, (_, index) => `System ${index}`).join(', '), []);
    expect(tasks).toHaveLength(20);
    const [long] = tasksFromAnswer('integrations', 'x'.repeat(500), []);
    expect([...long!.title.slice('Connect '.length)]).toHaveLength(100);
    expect(long!.origin.length).toBeLessThanOrEqual(200);
  });

  it('asks for a REVIEW task per regulation picked, by its label, and none for "none"', () => {
    const tasks = tasksFromAnswer('compliance', ['gdpr', 'pci'], complianceOptions);
    expect(tasks.map((task) => [task.origin, task.type, task.title, task.priority])).toEqual([
      ['compliance:gdpr', 'REVIEW', 'Review GDPR obligations', 'high'],
      ['compliance:pci', 'REVIEW', 'Review PCI DSS obligations', 'high'],
    ]);
    expect(tasksFromAnswer('compliance', ['none'], complianceOptions)).toEqual([]);
  });

  it('asks for nothing on any other question', () => {
    expect(tasksFromAnswer('problem', 'Stripe, Salesforce', [])).toEqual([]);
  });
});
