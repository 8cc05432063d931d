import { hasVisibleCharacter, NO_VISIBLE_CHARACTER } from '../../../kit-runtime/index.ts';
import type { FlowQuestionRow } from '../../db/database.ts';
import { invalid } from '../../errors/app-error.ts';
import type { AnswerValue } from './flow-catalogue.ts';
import { namesIn, saysNothing } from './flow-derivations.ts';

const field = 'answer.value';

/** The text questions whose answer is a list of names (each an entity or an integration of the ontology). */
const NAME_LIST_KEYS = new Set(['entities', 'integrations']);
/** The name list that may answer "none": the product may connect to nothing, yet it keeps track of something. */
const OPTIONAL_NAME_LIST_KEY = 'integrations';

function refuse(question: FlowQuestionRow, issue: string): never {
  throw invalid(`The answer to "${question.key}" ${issue}`, { issues: [{ field, issue }] });
}

/**
 * Checks an answer against its question's type and options, and returns it as stored: text
 * trimmed (and showing something), a multiselect's values as given (distinct). Throws VALIDATION_ERROR naming the field.
 */
export function answerFitsQuestion(question: FlowQuestionRow, value: AnswerValue): AnswerValue {
  const allowed = question.options.map((option) => option.value);
  switch (question.answer_type) {
    case 'text': {
      if (typeof value !== 'string') refuse(question, 'must be a string');
      const text = value.trim();
      if (text === '') refuse(question, 'must not be empty');
      // "\u200b" or a bidirectional mark alone is not empty, yet shows nothing: the question would count as answered.
      if (!hasVisibleCharacter(text)) refuse(question, NO_VISIBLE_CHARACTER);
      // ", ;" is not empty, yet names nothing: the question would count as answered with no entity. An
      // optional list ("integrations") may say there is none ("none", "N/A"); the entities may not.
      if (NAME_LIST_KEYS.has(question.key) && namesIn(text).length === 0) {
        const none = saysNothing(text);
        if (!(none && question.key === OPTIONAL_NAME_LIST_KEY)) {
          refuse(question, `must name at least one thing (names separated by commas, semicolons or lines)${none ? ': "none" or "N/A" names nothing the product keeps' : ''}`);
        }
      }
      return text;
    }
    case 'select':
      if (typeof value !== 'string') refuse(question, 'must be one option value, as a string');
      if (!allowed.includes(value)) refuse(question, `must be one of: ${allowed.join(', ')}`);
      return value;
    case 'multiselect': {
      if (!Array.isArray(value)) refuse(question, 'must be an array of option values');
      if (value.length === 0) refuse(question, 'must name at least one option');
      const unknown = value.filter((choice) => !allowed.includes(choice));
      if (unknown.length > 0) refuse(question, `names values that are not options (${unknown.slice(0, 5).join(', ')}); the options are: ${allowed.join(', ')}`);
      if (new Set(value).size !== value.length) refuse(question, 'names an option more than once');
      const exclusive = question.options.find((option) => option.exclusive && value.includes(option.value));
      if (exclusive && value.length > 1) refuse(question, `cannot name "${exclusive.value}" beside other options`);
      return value;
    }
    case 'boolean':
      if (typeof value !== 'boolean') refuse(question, 'must be true or false');
      return value;
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) refuse(question, 'must be a number');
      const bounds = question.bounds;
      if (bounds?.integer && !Number.isInteger(value)) refuse(question, 'must be a whole number');
      if (bounds && (value < bounds.min || value > bounds.max)) refuse(question, `must be from ${bounds.min} to ${bounds.max}`);
      return value;
    }
  }
}
