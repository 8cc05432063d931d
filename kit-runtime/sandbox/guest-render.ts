/**
 * Guest code of the render context: the long-lived context of a pooled isolate that holds
 * Handlebars and the kit version's compiled templates. Only templates run here, never hook code,
 * and templates cannot assign anything, so the compiled-template cache can safely outlive a run.
 * Intrinsics are frozen after setup anyway, as a second wall.
 *
 * Run with `evalClosure(RENDER_BOOTSTRAP, [configJson])` after Handlebars' browser build has been
 * evaluated in the same context; it returns the render function (the host keeps it as a Reference).
 * Request and response are JSON strings.
 */
import { measureTemplateDepth } from '../template-depth.ts';

export const RENDER_BOOTSTRAP = `
'use strict';
const config = JSON.parse($0);
const measureTemplateDepth = (${measureTemplateDepth.toString()});
const hb = Handlebars.create();
delete globalThis.Handlebars;
delete globalThis.console;

class LimitError extends Error {}

// Partials can recurse ({{> self}}), which no static check sees; count them as they are entered.
let partialDepth = 0;
const invokePartial = hb.VM.invokePartial;
hb.VM.invokePartial = function (partial, context, options) {
  if (partialDepth >= config.maxDepth) {
    throw new LimitError('kit exceeded its template depth limit of ' + config.maxDepth + ' (partials nested too deep)');
  }
  partialDepth++;
  try { return invokePartial.call(this, partial, context, options); } finally { partialDepth--; }
};

// JSON text is also a YAML flow scalar, except for characters YAML does not allow unescaped (DEL,
// the C1 controls, U+FFFE, U+FFFF): JSON.stringify leaves them as they are, and a strict YAML parser
// (libyaml, SnakeYAML) refuses the document, or reads U+0085 as a line break. Escaped, the JSON means the same.
const NOT_YAML_PRINTABLE = /[\\u007f-\\u009f\\ufffe\\uffff]/g;
hb.registerHelper('json', function (value, indent) {
  const spaces = typeof indent === 'number' ? indent : undefined;
  const text = JSON.stringify(value === undefined ? null : value, null, spaces);
  if (text === undefined) return 'null';
  return text.replace(NOT_YAML_PRINTABLE, (c) => '\\\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
});
hb.registerHelper('html', (value) => hb.escapeExpression(value));
hb.registerHelper('eq', (a, b) => a === b);

// Outputs are not HTML: every value is written as its text, unescaped. Not with noEscape, whose
// generated code writes a + b where a program starts with two values ({{major}}{{minor}} of 1
// and 2 gave "3"): templates escape as usual, through an escapeExpression that only makes text.
// hb.escapeExpression (the html helper's) keeps the real one; compiled templates read Utils'.
hb.Utils.escapeExpression = function asText(value) {
  if (typeof value === 'string') return value;
  return value === null || value === undefined ? '' : String(value);
};
const COMPILE_OPTIONS = {};
function compile(source) {
  const ast = hb.parse(source);
  const depth = measureTemplateDepth(ast);
  if (depth > config.maxDepth) {
    throw new LimitError('kit exceeded its template depth limit of ' + config.maxDepth + ' (blocks nest ' + depth + ' deep)');
  }
  return hb.compile(ast, COMPILE_OPTIONS);
}
function messageOf(error) {
  try { return String(error && error.message !== undefined ? error.message : error); } catch { return 'unknown error'; }
}

// Compiled lazily by Handlebars on first use, then cached for the life of the isolate.
const templates = Object.create(null);
function templateFor(key, source) {
  let entry = templates[key];
  if (entry === undefined) {
    try { entry = { fn: compile(source) }; } catch (error) { entry = { error: error instanceof LimitError ? error : messageOf(error) }; }
    templates[key] = entry;
  }
  if (entry.error instanceof LimitError) throw entry.error;
  if (entry.error !== undefined) throw new Error(entry.error);
  return entry.fn;
}
for (const name of Object.keys(config.partials)) {
  const file = config.partials[name];
  hb.registerPartial(name, (context, options) => templateFor(file, config.sources[file])(context, options));
}

function renderOne(key, source, data, runtimeOptions) {
  partialDepth = 0;
  const out = templateFor(key, source)(data, runtimeOptions);
  if (typeof out !== 'string') throw new Error('template did not produce text');
  return out;
}

function render(requestJson) {
  const request = JSON.parse(requestJson);
  const runtimeOptions = { data: request.meta };
  const results = [];
  let total = 0;
  try {
    for (const output of request.outputs) {
      try {
        runtimeOptions.data = Object.assign({}, request.meta, { output: output.declaration });
        const content = renderOne(output.template, config.sources[output.template], request.data, runtimeOptions);
        // UTF-16 length never exceeds UTF-8 size, so this early check cannot be too strict;
        // the host measures exact bytes.
        if (content.length > config.maxOutputBytes) {
          throw new LimitError('kit exceeded its output size limit of ' + config.maxOutputBytes + ' bytes (output "' + output.outputId + '")');
        }
        total += content.length;
        if (total > config.maxTotalOutputBytes) {
          throw new LimitError('kit exceeded its total output size limit of ' + config.maxTotalOutputBytes + ' bytes');
        }
        const filename = output.filename.indexOf('{{') === -1
          ? output.filename
          : renderOne('filename:' + output.outputId, output.filename, request.data, runtimeOptions);
        results.push({ outputId: output.outputId, filename: filename, content: content });
      } catch (error) {
        if (error instanceof LimitError) throw error;
        results.push({ outputId: output.outputId, error: messageOf(error) });
      }
    }
  } catch (error) {
    return JSON.stringify({ limit: messageOf(error), kind: /depth/.test(messageOf(error)) ? 'template-depth' : 'output-size' });
  }
  return JSON.stringify({ results: results });
}

for (const name of ['Object', 'Array', 'Function', 'String', 'Number', 'Boolean', 'Symbol', 'RegExp', 'Date', 'Map', 'Set', 'Promise', 'JSON', 'Math', 'Reflect']) {
  const value = globalThis[name];
  if (typeof value === 'function' && value.prototype) Object.freeze(value.prototype);
  Object.freeze(value);
}
Object.freeze(hb);
return render;
`;
