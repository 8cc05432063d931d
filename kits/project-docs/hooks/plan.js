// CHECK and PLAN both read the entities, so both live here: the checks see exactly the names the
// plan prints, from the same helpers.
// PLAN shapes the business profile and discovery answers into what the documents print: entity
// relationships for the ER diagram, components for the context diagram, and numbered decisions.
// Accented Latin letters keep their base letter (`Größe` → `Grosse`) instead of disappearing; so
// do the letters NFD leaves whole, in their usual spelling (`Ærø` → `Aero`, `Łódź` → `Lodz`, not
// `R` and `Odz`), as in openapi-api and postgres-schema.
var WHOLE_LETTERS = { 'Ø': 'O', 'ø': 'o', 'Ł': 'L', 'ł': 'l', 'Đ': 'D', 'đ': 'd', 'Ð': 'D', 'ð': 'd', 'Ħ': 'H', 'ħ': 'h', 'ı': 'i', 'Æ': 'Ae', 'æ': 'ae', 'Œ': 'Oe', 'œ': 'oe', 'Þ': 'Th', 'þ': 'th', 'ẞ': 'Ss', 'ß': 'ss' };
function latin(text) {
  return String(text).normalize('NFD').replace(/[\u0300-\u036f]/g, '')
    .replace(/[ØøŁłĐđÐðĦħı]/g, function (c) { return WHOLE_LETTERS[c]; })
    // Before a capital, a digraph is all capitals, so `ÆRØ` stays one word (`AERO`, not `Ae RO`).
    .replace(/[ÆŒÞẞ](?=[A-Z])/g, function (c) { return WHOLE_LETTERS[c].toUpperCase(); })
    .replace(/[ÆæŒœÞþẞß]/g, function (c) { return WHOLE_LETTERS[c]; });
}
// A name's words: split at any character that is not a Latin letter or digit, after a lower-case
// letter or digit that a capital follows (`payloadBooking` → `payload Booking`, `S3Bucket` → `S3
// Bucket`), and in a run of capitals that a capital and a lower-case letter end, before that last
// capital (`APIKey` → `API Key`, `getHTTPResponseCode` → `get HTTP Response Code`), as change-case
// and lodash split; but only where at least two capitals stay before it, so a single capital is not
// a word of its own (`OAuthToken` → `OAuth Token`, `ETag` and `XMax` one word each, not `O Auth`,
// `E Tag`, `X Max`), and an acronym's plural `s` stays with it (`URLs`, `userIDs` → `user IDs`, not
// `UR Ls`). So `API key`, `apiKey` and `APIKey` are the same two words. The same in openapi-api,
// postgres-schema and project-docs: composite-bundle's test holds the three to one table of names.
function words(name) {
  return latin(name).replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/(?<=[A-Z])([A-Z])(?=[A-Z](?!s(?![a-z]))[a-z])/g, '$1 ')
    .split(/[^A-Za-z0-9]+/).filter(Boolean);
}
function pascal(name) { return words(name).map(function (w) { return w.charAt(0).toUpperCase() + w.slice(1); }).join('') || 'Entity'; }
function slug(text) { return latin(text).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60).replace(/-+$/, '') || 'decision'; }
// Mermaid labels go inside "…"; a quote or a newline would end them early.
function label(text) { return String(text).replace(/"/g, '#quot;').replace(/[\r\n]+/g, ' '); }
// Text in a Markdown table cell: a "|" would start a new cell and a line break would end the row.
function cell(text) { return String(text).replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' '); }
// The text of a link, `[text](file)`: an unmatched `[` or `]` would end it early or leave it
// unclosed, and a backslash at its end would escape the closing `]`; escaped, each reads as itself.
function linkText(text) { return String(text).replace(/[\\\[\]]/g, '\\$&'); }
// A heading or a line such as `Status: …`: a line break would start a heading or a paragraph of its own.
function oneLine(text) { return String(text).replace(/[\r\n]+/g, ' '); }
// One line of text that starts a list item or a paragraph: a leading ``` (with no backtick after
// it) or ~~~ would open a code block in place of the text, one that runs on to the end of the
// document for many readers; `#` would start a heading and `>` a quote; `<` and a letter, `/`, `!`
// or `?` an HTML block (`<!--`, `<pre>`, `<script>` hide everything after them, the diagrams
// included); `- `, `+ `, `* ` or `1. ` a list, and `---`, `***` or `___` a horizontal rule in place of
// the text. A backslash before the first character (after the number of `1.`) keeps it literal.
// Leading spaces and tabs are dropped: four of them would make the line a code block.
function lineStart(text) {
  var line = oneLine(text).replace(/^[ \t]+/, '');
  if (/^\d{1,9}[.)](?=[ \t]|$)/.test(line)) return line.replace(/^(\d{1,9})/, '$1\\');
  return line.replace(/^(?=`{3,}[^`]*$|~{3}|#|>|<[A-Za-z\/!?]|[-+*](?:[ \t]|$)|([-*_])[ \t]*(?:\1[ \t]*){2,}$)/, '\\');
}
// A code span holding any text: its fence is one backtick longer than the longest run inside, and a
// text that starts or ends with a backtick is padded, so a backtick in a name cannot end it early.
function code(value) {
  var text = String(value);
  var runs = text.match(/`+/g) || [];
  var fence = '`'.repeat(runs.reduce(function (longest, run) { return Math.max(longest, run.length + 1); }, 1));
  var padded = /^`|`$/.test(text) ? ' ' + text + ' ' : text;
  return fence + padded + fence;
}
// A Mermaid ER attribute name is a word that starts with a letter or `_`; PK, FK and UK are keys.
function attributeName(name) {
  var word = latin(name).replace(/[^A-Za-z0-9_]/g, '_');
  return /^[A-Za-z_]/.test(word) && !/^(PK|FK|UK)$/.test(word) ? word : '_' + word;
}
// The entity a reference names: as in openapi-api and postgres-schema, a listed name in any letter case
// (`payloadbooking` is `PayloadBooking`); otherwise a name drawn as the same entity (`payload booking`).
function entityIndex(entities) {
  var index = Object.create(null);
  (Array.isArray(entities) ? entities : []).forEach(function (raw) {
    var name = typeof raw === 'string' ? raw : raw !== null && typeof raw === 'object' ? raw.name : null;
    if (typeof name === 'string' && name.trim() !== '' && !index[name.toLowerCase()]) index[name.toLowerCase()] = pascal(name);
  });
  return index;
}
function referenced(index, name) { return index[String(name).toLowerCase()] || pascal(name); }
function isKey(name) { return words(name).join('_').toLowerCase() === 'id'; }
function pad(n) { return ('000' + n).slice(-4); }
// Keyed by the field's type, which the user chose: with no prototype, `constructor` is no type.
var ER_TYPES = Object.assign(Object.create(null), { uuid: 'uuid', string: 'string', text: 'text', integer: 'int', number: 'decimal', boolean: 'boolean', date: 'date', datetime: 'timestamp', email: 'string', enum: 'string', reference: 'uuid' });

function plan(context) {
  var profile = context.input.businessProfile;
  var answers = context.input.discoveryAnswers;
  var architecture = answers.architecture || {};
  var entityNames = entityIndex(answers.entities);
  var entities = answers.entities.map(function (raw) {
    var entity = typeof raw === 'string' ? { name: raw } : raw;
    var fields = (entity.fields || []).map(function (f) {
      return {
        name: attributeName(f.name),
        // The key is a uuid in the other kits also when its field leaves the type out.
        type: ER_TYPES[f.type] || (isKey(f.name) ? 'uuid' : 'string'),
        key: isKey(f.name) ? 'PK' : f.type === 'reference' ? 'FK' : '',
        // The key is always there (NOT NULL in postgres-schema, required in openapi-api).
        required: f.required === true || isKey(f.name),
        // An enum lists its values also when it has a description: they are what a reader looks for.
        description: cell([f.description, f.type === 'enum' ? 'one of ' + (f.values || []).join(', ') : ''].filter(Boolean).join('; ')),
        docType: cell(f.type === 'reference' ? 'reference to ' + referenced(entityNames, f.entity) : (f.type || (isKey(f.name) ? 'uuid' : 'string'))),
        displayName: code(cell(f.name)),
      };
    });
    return { name: pascal(entity.name), title: entity.name, description: entity.description || '', descriptionCell: cell(entity.description || ''), fields: fields, references: (entity.fields || []).filter(function (f) { return f.type === 'reference'; }) };
  });
  var relationships = [];
  entities.forEach(function (entity) {
    entity.references.forEach(function (ref) {
      relationships.push({ from: referenced(entityNames, ref.entity), to: entity.name, label: label(ref.name), required: ref.required === true });
    });
  });
  var integrations = (architecture.integrations || []).map(function (item, index) {
    var it = typeof item === 'string' ? { name: item } : item;
    return { id: 'ext' + (index + 1), name: label(it.name), purpose: label(it.purpose || 'integration') };
  });
  var audience = (profile.audience && profile.audience.length ? profile.audience : ['users']).map(function (a, index) {
    return { id: 'actor' + (index + 1), name: label(a) };
  });
  var decisions = [{
    title: 'Record architecture decisions',
    context: 'Decisions about ' + oneLine(profile.company.name) + ' need to be understood by people who join later.',
    decision: 'Keep architecture decision records (ADRs) in docs/adr, one Markdown file per decision, numbered in order.',
    consequences: 'Every significant change comes with a short ADR; superseded ones stay, marked as such.',
  }].concat(answers.decisions || []).map(function (d, index) {
    var number = pad(index + 1);
    var status = d.status || 'Accepted';
    return {
      number: number, title: oneLine(d.title), titleLink: cell(linkText(d.title)), file: number + '-' + slug(d.title) + '.md',
      context: d.context || '', decision: d.decision || '', consequences: d.consequences || '', status: oneLine(status), statusCell: cell(status),
    };
  });
  return {
    data: {
      // Printed in headings and list items, where a line break would start a block of its own.
      // The name also starts the architecture overview's first line.
      name: lineStart(profile.company.name),
      industry: oneLine(profile.company.industry),
      description: profile.description || lineStart(profile.company.name + ' (' + profile.company.industry + ').'),
      goals: (profile.goals || []).map(lineStart),
      audience: audience,
      entities: entities,
      relationships: relationships,
      integrations: integrations,
      architecture: {
        style: oneLine(architecture.style || 'modular monolith'),
        runtime: oneLine(architecture.runtime || 'not decided'),
        // The architecture overview's fourth line starts with it.
        database: lineStart(architecture.database || 'not decided'),
        deployment: oneLine(architecture.deployment || 'not decided'),
        databaseLabel: label(architecture.database || 'Database'),
        appLabel: label(profile.company.name + ' application'),
      },
      decisions: decisions,
    },
  };
}

// What a value is, for a message such as `… must be text, not a number`.
function kindOf(value) {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : 'a ' + typeof value;
}

// The default CHECK made sure the required inputs are there; this one checks what PLAN and the
// templates read from them: every entity, field, integration and decision is an object with a name
// or title (a null entry would fail PLAN with a JavaScript error, an untitled decision would be
// `0003-undefined.md`), no two entities become one in the diagram (`user`, `User`), `required`
// is true or false, as the other kits read it, an enum has text values, a reference names a listed
// entity (the ER diagram would draw one that does not exist), and what the documents print as text
// is text and what they list is a list (goals that are one string would fail PLAN).
function check(context) {
  var profile = context.input.businessProfile;
  var answers = context.input.discoveryAnswers;
  var errors = [];
  function text(value) { return typeof value === 'string' && value.trim() !== ''; }
  function isObject(value) { return value !== null && typeof value === 'object' && !Array.isArray(value); }
  // An optional text: absent (undefined or null) or a string; the message names the input path.
  // The documents print it: a number or an object would print as `42` or `[object Object]`.
  function optionalText(value, path) {
    if (value !== undefined && value !== null && typeof value !== 'string') errors.push(path + ' must be text, not ' + kindOf(value));
  }
  function list(value, where, each) {
    if (value === undefined || value === null) return;
    if (!Array.isArray(value)) { errors.push(where + ' must be a list'); return; }
    value.forEach(function (item, index) { each(item, where + '[' + index + ']', index); });
  }

  optionalText(profile.company.name, 'businessProfile.company.name');
  optionalText(profile.company.industry, 'businessProfile.company.industry');
  optionalText(profile.description, 'businessProfile.description');
  list(profile.goals, 'businessProfile.goals', function (goal, where) { if (typeof goal !== 'string') errors.push(where + ' must be text, not ' + kindOf(goal)); });
  list(profile.audience, 'businessProfile.audience', function (who, where) { if (typeof who !== 'string') errors.push(where + ' must be text, not ' + kindOf(who)); });

  // The names the diagram draws, all of them first: a reference may point to a later entity.
  var listed = Object.create(null);
  list(answers.entities, 'discoveryAnswers.entities', function (raw) {
    var name = typeof raw === 'string' ? raw : isObject(raw) ? raw.name : null;
    if (text(name)) listed[pascal(name)] = true;
  });
  var entityNames = entityIndex(answers.entities);
  var diagramNames = Object.create(null);
  list(answers.entities, 'discoveryAnswers.entities', function (raw, where) {
    var entity = typeof raw === 'string' ? { name: raw } : raw;
    if (!isObject(entity) || !text(entity.name)) { errors.push(where + ' must be a name or an object with a name'); return; }
    // The ER diagram and the headings name an entity by pascal(name): `user` and `User` would be
    // drawn as one entity.
    var name = pascal(entity.name);
    if (diagramNames[name]) errors.push('entity ' + JSON.stringify(entity.name) + ' and entity ' + JSON.stringify(diagramNames[name]) + ' both become entity "' + name + '"');
    else diagramNames[name] = entity.name;
    optionalText(entity.description, where + '.description');
    list(entity.fields, 'entity ' + JSON.stringify(entity.name) + ': fields', function (field, at, index) {
      if (!isObject(field) || !text(field.name)) { errors.push(at + ' must be an object with a name'); return; }
      var label = 'field ' + entity.name + '.' + field.name;
      var path = where + '.fields[' + index + ']';
      // The field rules openapi-api and postgres-schema apply too, with the same messages
      // (composite-bundle.test.ts runs the three on the same fields); but a reference here finds any
      // name drawn as the same entity, where they match the name in any letter case.
      if (field.required !== undefined && field.required !== null && typeof field.required !== 'boolean') {
        errors.push(label + ' has required ' + JSON.stringify(field.required) + '; it must be true or false');
      }
      optionalText(field.type, path + '.type');
      optionalText(field.description, path + '.description');
      if (field.type === 'enum' && (!Array.isArray(field.values) || field.values.length === 0)) errors.push(label + ' is an enum without values');
      else if (field.type === 'enum') {
        field.values.forEach(function (value, valueIndex) {
          if (typeof value !== 'string') errors.push(path + '.values[' + valueIndex + '] must be text, not ' + kindOf(value));
        });
      }
      if (field.type === 'reference') {
        if (field.entity === undefined || field.entity === null) errors.push(path + '.entity is missing: a reference names the entity it points to');
        else if (typeof field.entity !== 'string') errors.push(path + '.entity must be text, not ' + kindOf(field.entity));
        else if (!listed[referenced(entityNames, field.entity)]) errors.push(label + ' references unknown entity ' + JSON.stringify(field.entity));
      }
    });
  });
  if (answers.architecture !== undefined && answers.architecture !== null && !isObject(answers.architecture)) {
    errors.push('discoveryAnswers.architecture must be an object, not ' + kindOf(answers.architecture));
  }
  if (isObject(answers.architecture)) {
    ['style', 'runtime', 'database', 'deployment'].forEach(function (key) {
      optionalText(answers.architecture[key], 'discoveryAnswers.architecture.' + key);
    });
    list(answers.architecture.integrations, 'discoveryAnswers.architecture.integrations', function (item, where) {
      if (!text(item) && !(isObject(item) && text(item.name))) errors.push(where + ' must be a name or an object with a name');
      else if (isObject(item)) optionalText(item.purpose, where + '.purpose');
    });
  }
  list(answers.decisions, 'discoveryAnswers.decisions', function (decision, where) {
    if (!isObject(decision)) { errors.push(where + ' must be an object with a title'); return; }
    if (!text(decision.title)) errors.push(where + ' has no title');
    if (decision.status !== undefined && decision.status !== null && typeof decision.status !== 'string') errors.push(where + ': status must be text');
    ['context', 'decision', 'consequences'].forEach(function (key) { optionalText(decision[key], where + '.' + key); });
  });
  return { errors: errors };
}
