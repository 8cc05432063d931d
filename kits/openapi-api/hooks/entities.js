// CHECK and PLAN both read the entities, so both live here: the checks see exactly the names the
// plan prints, from the same helpers.
// PLAN runs after CHECK, so the required inputs are there. It turns the discovery answers into
// the shapes the template prints: schema names, paths, parameters and JSON Schemas per field.
var FIELD_SCHEMAS = byName({
  uuid: { type: 'string', format: 'uuid' },
  string: { type: 'string' },
  text: { type: 'string' },
  // postgres-schema's column is `integer` (4 bytes), and its JSON Schema says so: an API that took
  // 3000000000 would accept a value the row cannot hold.
  integer: { type: 'integer', minimum: -2147483648, maximum: 2147483647 },
  number: { type: 'number' },
  boolean: { type: 'boolean' },
  date: { type: 'string', format: 'date' },
  datetime: { type: 'string', format: 'date-time' },
  email: { type: 'string', format: 'email' },
});
var ALL_OPERATIONS = ['list', 'get', 'create', 'update', 'delete'];

// Accented Latin letters keep their base letter (`Größe` → `grosse`, `Ünïcode` → `Unicode`)
// instead of disappearing with the other characters names cannot hold; so do the letters NFD
// leaves whole, in their usual spelling (`Ærø` → `Aero`, `Łódź` → `Lodz`, not `R` and `Odz`).
// The same in postgres-schema and project-docs: composite-bundle names one entity alike in all three.
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
function pascal(name) {
  return words(name).map(function (w) { return w.charAt(0).toUpperCase() + w.slice(1); }).join('');
}
// The first word in lower case whole, so `ID` is `id` (the key) and `URL` `url` (not `iD`, `uRL`).
function camel(name) {
  var all = words(name);
  if (all.length === 0) return '';
  return all[0].toLowerCase() + all.slice(1).map(function (w) { return w.charAt(0).toUpperCase() + w.slice(1); }).join('');
}
// English plurals. Only the last word of a name changes (`payload_booking` → `payload_bookings`,
// `ChildCare` → `ChildCares`, `care_child` → `care_children`); it is found as words() finds words,
// so a name and its kebab, snake or Pascal form end in the same word. The letters the plural keeps
// keep their case and the ones it adds are lower case, as before (`URL` → `URLs`, `Person` →
// `People`). The same in postgres-schema (tables) and openapi-api (paths): composite-bundle's API
// paths and tables must agree, and its test holds the two copies to one table of words.
// Kept as they are: uncountable nouns and names that are already plural.
var PLURAL_KEPT = byName({});
['news', 'series', 'species', 'equipment', 'information', 'info', 'data', 'metadata', 'feedback', 'software',
  'hardware', 'firmware', 'middleware', 'malware', 'settings', 'details', 'credentials', 'preferences', 'metrics',
  'analytics', 'statistics', 'logistics', 'electronics', 'sheep', 'deer', 'fish', 'moose', 'aircraft', 'spacecraft',
  'staff', 'personnel', 'furniture', 'luggage', 'baggage', 'advice', 'knowledge', 'research', 'traffic', 'music',
  'weather', 'homework', 'evidence', 'wildlife', 'nightlife', 'media', 'criteria', 'people', 'children', 'men',
  'women', 'mice', 'lice', 'geese', 'feet', 'teeth', 'oxen', 'police', 'headquarters', 'means', 'pants', 'scissors',
  'glasses', 'clothes', 'goods', 'thanks', 'premises'].forEach(function (w) { PLURAL_KEPT[w] = true; });
// Irregular plurals of a whole word.
var PLURAL_IRREGULAR = byName({
  child: 'children', person: 'people', man: 'men', woman: 'women', mouse: 'mice', louse: 'lice', goose: 'geese',
  foot: 'feet', tooth: 'teeth', ox: 'oxen', axis: 'axes', criterion: 'criteria',
});
// Compounds of man that take -men (`fireman` → `firemen`); `human`, `German` and other -man words take -s.
var PLURAL_MEN = byName({});
['chairman', 'salesman', 'fireman', 'policeman', 'postman', 'spokesman', 'foreman', 'craftsman', 'fisherman',
  'businessman', 'gentleman', 'workman', 'freshman', 'cameraman', 'repairman', 'handyman', 'sportsman',
  'countryman', 'middleman', 'nobleman', 'doorman', 'seaman', 'linesman', 'tradesman'].forEach(function (w) { PLURAL_MEN[w] = true; });
// Words in -o that take -es; every other -o word takes -s (photo, video, logo, radio, memo, zero …).
var PLURAL_O_ES = byName({});
['hero', 'superhero', 'antihero', 'potato', 'tomato', 'echo', 'veto', 'torpedo', 'embargo', 'mosquito', 'volcano',
  'cargo', 'domino', 'buffalo', 'tornado'].forEach(function (w) { PLURAL_O_ES[w] = true; });
// Endings replaced by their plural: irregular ones, and -f or -fe that become -ves (`leaf`,
// `bookshelf`, `housewife`; roof, chef, belief, proof, safe and the rest take -s). A word that
// already ends in the plural is kept (`Leaves`, `Salespeople`), as the irregular plurals are.
var PLURAL_ENDINGS = [['child', 'children'], ['person', 'people'], ['woman', 'women'], ['knife', 'knives'], ['life', 'lives'], ['wife', 'wives'], ['leaf', 'leaves'], ['half', 'halves'],
  ['shelf', 'shelves'], ['thief', 'thieves'], ['wolf', 'wolves'], ['calf', 'calves'], ['loaf', 'loaves'],
  ['sheaf', 'sheaves'], ['scarf', 'scarves'], ['wharf', 'wharves'], ['hoof', 'hooves']];
// The singulars in -as (every other -as word is a plural of one in -a: `Areas`, `Ideas`, `Schemas`,
// `Quotas`, kept as given) and the plurals in -us (every other -us word is a singular: status, bus,
// virus, campus take -es).
var SINGULAR_AS = byName({});
['alias', 'atlas', 'canvas', 'gas', 'biogas', 'bias', 'pancreas', 'christmas', 'xmas', 'madras'].forEach(function (w) { SINGULAR_AS[w] = true; });
var PLURAL_US = byName({});
['menus', 'gurus', 'emus', 'haikus', 'tofus', 'tutus', 'sudokus', 'zulus', 'bayous', 'kudzus', 'ecus'].forEach(function (w) { PLURAL_US[w] = true; });
// -ch said as k takes -s.
var PLURAL_CH_S = byName({ epoch: true, stomach: true, monarch: true, matriarch: true, patriarch: true, oligarch: true, tech: true, loch: true });
function pluralOfWord(word) {
  if (PLURAL_KEPT[word] || /ics$/.test(word) || /.ings$/.test(word)) return word;
  if (PLURAL_IRREGULAR[word]) return PLURAL_IRREGULAR[word];
  for (var i = 0; i < PLURAL_ENDINGS.length; i++) {
    var one = PLURAL_ENDINGS[i][0];
    var many = PLURAL_ENDINGS[i][1];
    if (word.slice(-many.length) === many) return word;
    if (word.slice(-one.length) === one) return word.slice(0, -one.length) + many;
  }
  if (PLURAL_MEN[word]) return word.slice(0, -3) + 'men';
  if (/men$/.test(word) && PLURAL_MEN[word.slice(0, -3) + 'man']) return word;
  if (/sis$/.test(word)) return word.slice(0, -2) + 'es';
  // A name already in the plural is kept (`Users`, `Orders`, `Boxes`, `Photos`): an s after any
  // letter but a, u or s, and an -as or -us that is a plural (`Areas`, `Schemas`, `Menus`; they
  // were `areases`, `schemases`, `menuses`). The singulars in -as (alias, canvas, gas), the other
  // -us words (status, bus) and -ss (class) take -es; a singular in another -s (lens, iris) keeps
  // its own spelling, which still names one table.
  if (/[^aus]s$/.test(word)) return word;
  if ((/as$/.test(word) && !SINGULAR_AS[word]) || PLURAL_US[word]) return word;
  // A one-syllable word ending in a single vowel and z doubles the z: quiz → quizzes, fez → fezzes.
  if (/^(qu|[^aeiou])*[aeiou]z$/.test(word)) return word + 'zes';
  if (/o$/.test(word)) return PLURAL_O_ES[word] ? word + 'es' : word + 's';
  if (/[^aeiou]y$/.test(word)) return word.slice(0, -1) + 'ies';
  if (/ch$/.test(word) && PLURAL_CH_S[word]) return word + 's';
  if (/(s|x|z|ch|sh)$/.test(word)) return word + 'es';
  return word + 's';
}
function plural(name) {
  var text = String(name);
  // The last word, as words() splits: after the last character that is not a letter or digit, or
  // after the last lower-case letter or digit that a capital follows, and in a run of capitals that
  // a lower-case letter follows, from the last capital when two or more stay before it
  // (`PayloadBookingItem` → `Item`, `APIKey` → `Key`, `HTTPProxy` → `Proxy`, `OAuth` whole), but with
  // an acronym's plural `s` (`URLs`, `IDs` and `URL` whole).
  var tail = /([A-Z]*)([a-z0-9]*)$/.exec(text);
  var start = tail.index;
  if (tail[1].length > 2 && /^[a-z]/.test(tail[2]) && !/^s(?![a-z])/.test(tail[2])) start += tail[1].length - 1;
  var word = text.slice(start);
  var lower = word.toLowerCase();
  var many = pluralOfWord(lower);
  // The letters the plural keeps keep their case; the ones it adds are lower case.
  var kept = 0;
  while (kept < lower.length && kept < many.length && lower[kept] === many[kept]) kept++;
  var result = word.slice(0, kept) + many.slice(kept);
  if (kept === 0 && /^[A-Z]/.test(word)) result = result.charAt(0).toUpperCase() + result.slice(1);
  return text.slice(0, start) + result;
}

// An optional field's column is nullable, so its schema admits null too: a row read back with the
// column NULL passes, and an API client clears the field by sending null (in a PATCH, leaving it out
// means "unchanged"). JSON Schema 2020-12 / OpenAPI 3.1 say so with a type list; an enum lists null
// among its values, since `enum` alone would still refuse it. Required fields stay non-null. The same
// in openapi-api and postgres-schema.
function orNull(schema) {
  var copy = Object.assign({}, schema);
  copy.type = [schema.type, 'null'];
  if (Array.isArray(schema.enum)) copy.enum = schema.enum.concat([null]);
  return copy;
}
function kebab(name) {
  return words(name).map(function (w) { return w.toLowerCase(); }).join('-');
}
// An entity's collection path: the plural of its words in kebab case, postgres-schema's table name
// with `-` for `_` (`API key`, `apiKey` and `APIKey` → `/api-keys`, table `api_keys`).
function collectionPathOf(name) { return '/' + plural(kebab(name)); }

// YAML reads a key written as `"key":` only when it ends within 1024 characters; a longer name is
// printed as an explicit key (`? "key"` on one line, `: value` on the next), which has no limit.
function explicitKey(name) { return JSON.stringify(name).length > 1000; }

function fieldSchema(field) {
  var schema;
  if (field.type === 'enum') schema = { type: 'string', enum: (field.values || []).map(String) };
  else if (field.type === 'reference') schema = { type: 'string', format: 'uuid', description: 'Id of a ' + pascal(field.entity || 'record') + '.' };
  // The key is a uuid (CHECK refuses another type), also when the field leaves its type out.
  else if (camel(field.name) === 'id') schema = Object.assign({}, FIELD_SCHEMAS.uuid);
  else schema = Object.assign({}, FIELD_SCHEMAS[field.type] || FIELD_SCHEMAS.string);
  if (field.type === 'string' && typeof field.maxLength === 'number') schema.maxLength = field.maxLength;
  if (field.description) schema.description = String(field.description);
  return schema;
}

function entityModel(entity) {
  var raw = typeof entity === 'string' ? { name: entity } : entity;
  var name = pascal(raw.name);
  var fields = (raw.fields && raw.fields.length ? raw.fields : [{ name: 'id', type: 'uuid' }, { name: 'name', type: 'string', required: true }])
    .map(function (f) {
      var required = f.required === true;
      // The key is always there; any other field the input leaves optional may be null.
      var schema = required || camel(f.name) === 'id' ? fieldSchema(f) : orNull(fieldSchema(f));
      return { name: camel(f.name), type: f.type || 'string', required: required, schema: schema };
    });
  var hasId = fields.some(function (f) { return f.name === 'id'; });
  if (!hasId) fields.unshift({ name: 'id', type: 'uuid', required: true, schema: FIELD_SCHEMAS.uuid });
  var inputFields = fields.filter(function (f) { return f.name !== 'id'; });
  var operations = (raw.operations && raw.operations.length ? raw.operations : ALL_OPERATIONS).filter(function (op) { return ALL_OPERATIONS.indexOf(op) !== -1; });
  var has = {};
  operations.forEach(function (op) { has[op] = true; });
  // The path and its parameter come from the name's own words, not from the schema name: joined in
  // Pascal case, some words lose their bounds (`Rocket 2` → `Rocket2`, `API 2` → `API2`), and the
  // path would part from postgres-schema's table (`/rocket2s` over `rocket_2s`).
  var idParam = camel(raw.name) + 'Id';
  var collectionPath = collectionPathOf(raw.name);
  var itemPath = collectionPath + '/{' + idParam + '}';
  return {
    name: name,
    description: raw.description || name + ' records.',
    tag: plural(name),
    idParam: idParam,
    collectionPath: collectionPath,
    collectionKeyExplicit: explicitKey(collectionPath),
    itemPath: itemPath,
    itemKeyExplicit: explicitKey(itemPath),
    schemaKeysExplicit: explicitKey(name + 'Input'),
    operationSuffix: name,
    pluralName: plural(name),
    properties: fields.map(function (f) {
      return { name: f.name, explicitKey: explicitKey(f.name), schema: f.name === 'id' ? Object.assign({ readOnly: true }, f.schema) : f.schema };
    }),
    required: ['id'].concat(inputFields.filter(function (f) { return f.required; }).map(function (f) { return f.name; })),
    inputProperties: inputFields.map(function (f) { return { name: f.name, explicitKey: explicitKey(f.name), schema: f.schema }; }),
    inputRequired: inputFields.filter(function (f) { return f.required; }).map(function (f) { return f.name; }),
    has: has,
    hasCollection: has.list || has.create,
    hasItem: has.get || has.update || has.delete,
  };
}

function plan(context, kit) {
  var company = context.input.businessProfile.company;
  var entities = context.input.discoveryAnswers.entities.map(entityModel);
  kit.log('info', 'OpenAPI for', entities.length, 'entities:', entities.map(function (e) { return e.name; }).join(', '));
  return {
    data: {
      title: company.name + ' API',
      description: context.input.businessProfile.description || 'The API of ' + company.name + '.',
      entities: entities,
    },
  };
}

// The default CHECK has already made sure the required inputs are there; this one checks what the
// document depends on: every entity and field has a name that survives being reduced to letters
// and digits, no two names become the same schema, path or property, operations are known, text
// is text (a description that is an object would make the document invalid), and a reference
// names a listed entity.
// A look-up table keyed by names the user chose: with no prototype, `constructor` or `toString`
// is an ordinary key, not a property every object already has.
function byName(entries) { return Object.assign(Object.create(null), entries); }

// The maxLength rule postgres-schema applies, word for word (kits/postgres-schema/hooks/entities.js,
// maxLengthProblem): composite-bundle runs both kits on one input, which must pass both or neither.
// Only a `string` field has a length there (varchar(n), at most PostgreSQL's 10485760); on any other
// type a maxLength would be written here and dropped there, so it is refused, not ignored.
var MAX_LENGTH = 10485760;
function maxLengthProblem(field) {
  if (field.maxLength === undefined || field.maxLength === null) return null;
  var shown = ' has maxLength ' + JSON.stringify(field.maxLength);
  if (field.type !== 'string') return shown + ', but only a field of type "string" takes one';
  var length = field.maxLength;
  if (typeof length !== 'number' || Math.floor(length) !== length || length < 1 || length > MAX_LENGTH) return shown + '; it must be a whole number from 1 to ' + MAX_LENGTH;
  return null;
}

// The rule postgres-schema applies, word for word (kits/postgres-schema/hooks/entities.js,
// idTypeProblem): its primary key is `"id" uuid`, and the paths take a uuid, so a field named id
// may leave its type out or say "uuid"; another type would describe a key the table does not have.
function idTypeProblem(field) {
  if (field.type === undefined || field.type === null || field.type === 'uuid') return null;
  return ' has type ' + JSON.stringify(field.type) + ', but the primary key id is always a uuid';
}

// What a value is, for a message such as `… must be text, not a number`.
function kindOf(value) {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : 'a ' + typeof value;
}

function check(context) {
  var entities = context.input.discoveryAnswers.entities;
  if (!Array.isArray(entities)) return { errors: ['discoveryAnswers.entities must be a list'] };
  var errors = [];
  // An optional text: absent (undefined or null) or a string; the message names the input path.
  function optionalText(value, path) {
    if (value !== undefined && value !== null && typeof value !== 'string') errors.push(path + ' must be text, not ' + kindOf(value));
  }
  var profile = context.input.businessProfile;
  optionalText(profile.company.name, 'businessProfile.company.name');
  optionalText(profile.description, 'businessProfile.description');
  // References may point forward, so every entity name is known before any field is checked.
  var known = byName({});
  entities.forEach(function (raw) {
    var name = typeof raw === 'string' ? raw : raw && raw.name;
    if (typeof name === 'string') known[name.toLowerCase()] = true;
  });
  var schemas = byName({ Error: 'the error model' });
  var paths = byName({});
  function claim(table, key, owner, what) {
    if (table[key]) errors.push(owner + ' and ' + table[key] + ' both become ' + what + ' "' + key + '"');
    else table[key] = owner;
  }
  entities.forEach(function (raw, index) {
    var entity = typeof raw === 'string' ? { name: raw } : raw;
    if (!entity || typeof entity !== 'object' || typeof entity.name !== 'string' || pascal(entity.name) === '') {
      errors.push('discoveryAnswers.entities[' + index + '] has no name with Latin letters or digits');
      return;
    }
    var owner = 'entity ' + JSON.stringify(entity.name);
    var name = pascal(entity.name);
    var at = 'discoveryAnswers.entities[' + index + ']';
    optionalText(entity.description, at + '.description');
    claim(schemas, name, owner, 'schema');
    claim(schemas, name + 'Input', owner, 'schema');
    claim(schemas, name + 'Patch', owner, 'schema');
    claim(paths, collectionPathOf(entity.name), owner, 'path');
    if (entity.operations !== undefined && entity.operations !== null) {
      var unknown = (Array.isArray(entity.operations) ? entity.operations : [entity.operations]).filter(function (op) { return ALL_OPERATIONS.indexOf(op) === -1; });
      if (!Array.isArray(entity.operations) || unknown.length) {
        errors.push(owner + ' has unknown operations ' + JSON.stringify(unknown) + '; known: ' + ALL_OPERATIONS.join(', '));
      }
    }
    if (entity.fields === undefined || entity.fields === null) return;
    if (!Array.isArray(entity.fields)) { errors.push(owner + ': fields must be a list'); return; }
    var properties = byName({});
    entity.fields.forEach(function (field, fieldIndex) {
      if (!field || typeof field !== 'object' || typeof field.name !== 'string' || camel(field.name) === '') {
        errors.push(owner + ': fields[' + fieldIndex + '] has no name with Latin letters or digits');
        return;
      }
      var label = 'field ' + name + '.' + field.name;
      var path = at + '.fields[' + fieldIndex + ']';
      claim(properties, camel(field.name), label, 'property');
      if (camel(field.name) === 'id') {
        var keyProblem = idTypeProblem(field);
        if (keyProblem) errors.push(label + keyProblem);
      }
      // From here, the field rules postgres-schema and project-docs apply too (project-docs all but
      // maxLength), with the same messages: composite-bundle.test.ts runs the three on the same fields.
      // Only `label` differs: it names the entity as its schema (`field LaunchPad.x`), they as given.
      optionalText(field.type, path + '.type');
      optionalText(field.description, path + '.description');
      if (field.required !== undefined && field.required !== null && typeof field.required !== 'boolean') {
        errors.push(label + ' has required ' + JSON.stringify(field.required) + '; it must be true or false');
      }
      var lengthProblem = maxLengthProblem(field);
      if (lengthProblem) errors.push(label + lengthProblem);
      if (field.type === 'enum' && (!Array.isArray(field.values) || field.values.length === 0)) errors.push(label + ' is an enum without values');
      else if (field.type === 'enum') {
        field.values.forEach(function (value, valueIndex) {
          if (typeof value !== 'string') errors.push(path + '.values[' + valueIndex + '] must be text, not ' + kindOf(value));
        });
      }
      // As in postgres-schema: a reference names a listed entity, in any letter case.
      if (field.type === 'reference') {
        if (field.entity === undefined || field.entity === null) errors.push(path + '.entity is missing: a reference names the entity it points to');
        else if (typeof field.entity !== 'string') errors.push(path + '.entity must be text, not ' + kindOf(field.entity));
        else if (!known[field.entity.toLowerCase()]) errors.push(label + ' references unknown entity ' + JSON.stringify(field.entity));
      }
    });
  });
  return { errors: errors };
}
