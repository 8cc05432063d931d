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

  it('reads the names as the ontology does: its separators, its "none"s, one system whatever its width, composition or invisible characters', () => {
    const origins = (answer: string) => tasksFromAnswer('integrations', answer, []).map((task) => task.origin);
    // "N/A", "no", "-" are answers the flow takes as naming nothing, as it takes "none".
    for (const nothing of ['N/A', 'no', 'None yet.', '-', 'nothing; n/a']) expect(origins(nothing)).toEqual([]);
    // A full-width or Arabic comma, a line or paragraph separator separates names as a comma does.
    expect(origins('Stripe\uff0cSalesforce\u060cSlack\u2028HubSpot\rZendesk')).toEqual(['integration:stripe', 'integration:salesforce', 'integration:slack', 'integration:hubspot', 'integration:zendesk']);
    // Full-width forms, a decomposed accent and a zero-width space spell the same system.
    expect(origins('\uff33\uff54\uff52\uff49\uff50\uff45, Stripe\u200b, Cafe\u0301, Caf\u00e9')).toEqual(['integration:stripe', 'integration:caf\u00e9']);
    expect(origins('Stripe')).toEqual(origins('\uff33\uff54\uff52\uff49\uff50\uff45\u200b'));
    // A part that shows nothing names nothing.
    expect(origins('Stripe, \u200b, \u200e')).toEqual(['integration:stripe']);
  });

  it('keeps every origin within what the database takes (a letter prefix, then 1 to 200 characters), however a name grows when folded', () => {
    // U+FDFA folds (NFKC) to 18 characters; U+0130 lowercases to two; an emoji is two UTF-16 units.
    for (const name of ['\ufdfa'.repeat(100), '\u0130'.repeat(100), '\u{1F600}'.repeat(100), 'x'.repeat(100), '\u3392'.repeat(100)]) {
      const [task] = tasksFromAnswer('integrations', name, []);
      expect(task!.origin).toMatch(/^[a-z]+:.{1,200}$/su);
      expect(task!.origin.isWellFormed()).toBe(true);
      // The same name gives the same origin: answering again finds the task.
      expect(tasksFromAnswer('integrations', name, [])[0]!.origin).toBe(task!.origin);
    }
    // Two long names that fold to the same first 200 characters are still two systems.
    const long = '\ufdfa'.repeat(20);
    expect(new Set(tasksFromAnswer('integrations', `${long}a, ${long}b`, []).map((task) => task.origin)).size).toBe(2);
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
