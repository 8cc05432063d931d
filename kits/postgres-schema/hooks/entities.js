// CHECK and PLAN both read the entities, so both live here: the checks see exactly the
// identifiers the plan prints, from the same helpers.
// Turns the discovery answers into tables, columns and JSON Schemas. Identifiers are reduced to
// [a-z0-9_] and always quoted; string literals are escaped (alike under either setting of
// standard_conforming_strings), so no answer can break out of the DDL.
var SQL_TYPES = byName({ uuid: 'uuid', string: 'text', text: 'text', integer: 'integer', number: 'numeric', boolean: 'boolean', date: 'date', datetime: 'timestamptz', email: 'text', enum: 'text', reference: 'uuid' });
var JSON_TYPES = byName({
  uuid: { type: 'string', format: 'uuid' }, string: { type: 'string' }, text: { type: 'string' },
  // The column is PostgreSQL's `integer` (4 bytes): the schema says so, rather than accept a
  // number the row cannot hold (3000000000 passed the schema and failed the INSERT).
  integer: { type: 'integer', minimum: -2147483648, maximum: 2147483647 }, number: { type: 'number' }, boolean: { type: 'boolean' },
  date: { type: 'string', format: 'date' }, datetime: { type: 'string', format: 'date-time' },
  email: { type: 'string', format: 'email' },
});

// Accented Latin letters keep their base letter (`Größe` → `grosse`, `Ünïcode` → `unicode`)
// instead of disappearing with the other characters identifiers cannot hold; so do the letters
// NFD leaves whole, in their usual spelling (`Ærø` → `aero`, `Łódź` → `lodz`, not `r` and `odz`).
// The same in openapi-api and project-docs: composite-bundle names one entity alike in all three.
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
function snakeWords(name) { return words(name).map(function (w) { return w.toLowerCase(); }).join('_') || 'x'; }
// A column; a table is the plural of the whole name. Both are cut to PostgreSQL's 63 bytes only
// after that, with a hash of the whole (shortName), so two long names that share a start stay two.
function snake(name) { return shortName(snakeWords(name)); }
function tableName(name) { return shortName(plural(snakeWords(name))); }
function pascal(name) { return words(name).map(function (w) { return w.charAt(0).toUpperCase() + w.slice(1); }).join(''); }
// The first word in lower case whole, so `ID` is `id` and `URL` `url` (not `iD`, `uRL`).
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
function ident(name) { return '"' + name + '"'; }
function hash8(text) {
  var hash = 2166136261;
  for (var i = 0; i < text.length; i++) { hash ^= text.charCodeAt(i); hash = Math.imul(hash, 16777619) >>> 0; }
  return ('0000000' + hash.toString(16)).slice(-8);
}
// Text longer than `max` keeps its start and gets a hash of the whole, so two long names that
// share a start stay distinct.
function cut(text, max, separator) {
  return text.length <= max ? text : text.slice(0, max - 9) + separator + hash8(text);
}
// PostgreSQL truncates identifiers to 63 bytes (these are ASCII), so a longer name keeps its start
// and gets a hash of the whole.
function shortName(name) { return cut(name, 63, '_'); }
// Index names share one namespace with the tables, and foreign keys are kept as distinct: two
// names can still meet (table `users` + column `roles_owner`, table `users_roles` + column
// `owner`), so each is claimed, and a name already taken gets a hash suffix.
function claimName(taken, name) {
  var candidate = shortName(name);
  for (var attempt = 1; taken[candidate]; attempt++) candidate = name.slice(0, 54) + '_' + hash8(name + '#' + attempt);
  taken[candidate] = true;
  return candidate;
}
// A file name: the slug plus `.schema.json` must stay within the 255 bytes file systems take.
function fileSlug(name) { return cut(words(name).map(function (w) { return w.toLowerCase(); }).join('-'), 120, '-'); }
// Text printed in a `--` comment: a line break would end the comment and start SQL.
function oneLine(text) { return String(text).replace(/[\r\n]+/g, ' '); }
// A look-up table keyed by names the user chose: with no prototype, `constructor` or `toString`
// is an ordinary key, not a property every object already has.
function byName(entries) { return Object.assign(Object.create(null), entries); }

// A literal that reads the same whatever standard_conforming_strings says. A plain '…' literal
// takes a backslash as an escape when that setting is off, so `\'; DROP TABLE x; --` ended the
// literal early and ran the rest as SQL: a value with a backslash is written as an escape string
// (E'…', backslashes doubled), which PostgreSQL reads alike under both settings.
function literal(value) {
  var text = String(value).replace(/'/g, "''");
  return text.indexOf('\\') === -1 ? "'" + text + "'" : "E'" + text.replace(/\\/g, '\\\\') + "'";
}

function plan(context, kit) {
  var raw = context.input.discoveryAnswers.entities.map(function (e) { return typeof e === 'string' ? { name: e } : e; });
  var tableOf = byName({});
  raw.forEach(function (e) { tableOf[String(e.name).toLowerCase()] = tableName(e.name); });
  var project = oneLine((context.input.businessProfile && context.input.businessProfile.company && context.input.businessProfile.company.name) || context.input.projectId || 'the project');
  var foreignKeys = [];
  var indexes = [];
  // Every name the schema will hold: the tables, their primary keys' indexes and the migration's.
  var taken = byName({ schema_migrations: true, schema_migrations_pkey: true });
  raw.forEach(function (e) { var t = tableOf[String(e.name).toLowerCase()]; taken[t] = true; taken[t + '_pkey'] = true; });

  var entities = raw.map(function (entity) {
    var table = tableOf[String(entity.name).toLowerCase()];
    var fields = (entity.fields && entity.fields.length ? entity.fields : [{ name: 'name', type: 'string', required: true }])
      .filter(function (f) { return snake(f.name) !== 'id'; });
    var columns = [{ sql: ident('id') + ' uuid PRIMARY KEY DEFAULT gen_random_uuid()' }];
    var properties = { id: { type: 'string', format: 'uuid', readOnly: true } };
    var required = ['id'];
    fields.forEach(function (field) {
      var column = snake(field.name);
      var type = SQL_TYPES[field.type] || 'text';
      if (field.type === 'string' && typeof field.maxLength === 'number') type = 'varchar(' + Math.max(1, Math.floor(field.maxLength)) + ')';
      var sql = ident(column) + ' ' + type + (field.required ? ' NOT NULL' : '');
      if (field.type === 'enum') sql += ' CHECK (' + ident(column) + ' IN (' + (field.values || []).map(literal).join(', ') + '))';
      // `[:space:]`, not `\s`: with standard_conforming_strings off, '\s' is the letter s, and
      // the check refused every address with an s in it.
      if (field.type === 'email') sql += ' CHECK (' + ident(column) + " ~ '^[^@[:space:]]+@[^@[:space:]]+$')";
      columns.push({ sql: sql });
      if (field.type === 'reference') {
        var target = tableOf[String(field.entity).toLowerCase()];
        foreignKeys.push({ table: ident(table), name: ident(claimName(taken, table + '_' + column + '_fkey')), column: ident(column), target: ident(target) });
        indexes.push({ name: ident(claimName(taken, table + '_' + column + '_idx')), table: ident(table), column: ident(column) });
      }
      var schema;
      if (field.type === 'enum') schema = { type: 'string', enum: (field.values || []).map(String) };
      else if (field.type === 'reference') schema = { type: 'string', format: 'uuid', description: 'Id of a ' + pascal(field.entity) + '.' };
      else schema = Object.assign({}, JSON_TYPES[field.type] || JSON_TYPES.string);
      if (field.type === 'string' && typeof field.maxLength === 'number') schema.maxLength = field.maxLength;
      if (field.description) schema.description = String(field.description);
      properties[camel(field.name)] = field.required ? schema : orNull(schema);
      if (field.required) required.push(camel(field.name));
    });
    columns.push({ sql: ident('created_at') + ' timestamptz NOT NULL DEFAULT now()' });
    columns.push({ sql: ident('updated_at') + ' timestamptz NOT NULL DEFAULT now()' });
    properties.createdAt = { type: 'string', format: 'date-time', readOnly: true };
    properties.updatedAt = { type: 'string', format: 'date-time', readOnly: true };
    var slug = fileSlug(entity.name);
    return {
      name: pascal(entity.name),
      slug: slug,
      table: table,
      tableSql: ident(table),
      comment: literal(entity.description || pascal(entity.name) + ' records.'),
      columns: columns,
      jsonSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $id: 'https://schemas.specwright.dev/' + (context.input.projectId || 'project') + '/' + slug + '.schema.json',
        title: pascal(entity.name),
        description: entity.description || pascal(entity.name) + ' records.',
        type: 'object',
        required: required.concat(['createdAt', 'updatedAt']),
        properties: properties,
        additionalProperties: false,
      },
    };
  });
  kit.log('info', 'tables:', entities.map(function (e) { return e.table; }).join(', '));
  return { data: { project: project, entities: entities, foreignKeys: foreignKeys, indexes: indexes } };
}

// The default CHECK has already made sure discoveryAnswers.entities is there; this one checks what
// the DDL depends on: every entity and field has a usable name, no two names become the same table,
// column or property once reduced to identifiers, enums have values, lengths fit PostgreSQL,
// references name entities that exist, and text is text (a description that is an object would make
// the entity's JSON Schema invalid).
var MAX_LENGTH = 10485760; // PostgreSQL's limit for varchar(n)

// A maxLength becomes varchar(n), so only a `string` field takes one, a whole number up to
// PostgreSQL's limit; on any other type it would be silently dropped, so it is refused. openapi-api
// applies this rule word for word (composite-bundle runs both on one input, which must pass both or
// neither): change the two together.
function maxLengthProblem(field) {
  if (field.maxLength === undefined || field.maxLength === null) return null;
  var shown = ' has maxLength ' + JSON.stringify(field.maxLength);
  if (field.type !== 'string') return shown + ', but only a field of type "string" takes one';
  var length = field.maxLength;
  if (typeof length !== 'number' || Math.floor(length) !== length || length < 1 || length > MAX_LENGTH) return shown + '; it must be a whole number from 1 to ' + MAX_LENGTH;
  return null;
}

// The system columns every PostgreSQL table has; a column of its own cannot take their names.
var SYSTEM_COLUMNS = byName({ tableoid: true, xmin: true, cmin: true, xmax: true, cmax: true, ctid: true });

// The primary key is `"id" uuid`, whatever type a field named id asks for: a field named id may
// leave its type out or say "uuid", and any other type is refused rather than dropped. openapi-api
// applies this rule word for word (its document would otherwise describe an integer key the
// table does not have): change the two together.
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
  var errors = [];
  if (!Array.isArray(entities) || entities.length === 0) return { errors: ['discoveryAnswers.entities must be a non-empty list'] };
  // An optional text: absent (undefined or null) or a string; the message names the input path.
  function optionalText(value, path) {
    if (value !== undefined && value !== null && typeof value !== 'string') errors.push(path + ' must be text, not ' + kindOf(value));
  }
  // Text the DDL prints (a comment, a COMMENT ON TABLE, an enum's CHECK): PostgreSQL refuses a NUL
  // character anywhere in a statement, so the script would not run at all.
  function sqlText(value, path) {
    if (typeof value === 'string' && value.indexOf('\u0000') !== -1) errors.push(path + ' contains a NUL character (\\u0000), which PostgreSQL cannot store');
  }
  var company = context.input.businessProfile && context.input.businessProfile.company;
  if (company) optionalText(company.name, 'businessProfile.company.name');
  if (company) sqlText(company.name, 'businessProfile.company.name');
  sqlText(context.input.projectId, 'projectId');
  var names = byName({});
  var tables = byName({ schema_migrations: 'the migration table' });
  var valid = [];
  entities.forEach(function (entity, index) {
    var name = typeof entity === 'string' ? entity : entity && entity.name;
    if (typeof name !== 'string' || !/[A-Za-z]/.test(words(name).join(' '))) { errors.push('discoveryAnswers.entities[' + index + '] has no name'); return; }
    if (names[name.toLowerCase()]) { errors.push('entity ' + name + ' is declared twice'); return; }
    names[name.toLowerCase()] = true;
    var table = tableName(name);
    if (tables[table]) errors.push('entity ' + JSON.stringify(name) + ' and ' + tables[table] + ' both become table "' + table + '"');
    else tables[table] = 'entity ' + JSON.stringify(name);
    valid.push({ entity: entity, at: 'discoveryAnswers.entities[' + index + ']' });
  });
  valid.forEach(function (listed) {
    var entity = listed.entity;
    if (typeof entity === 'string') return;
    optionalText(entity.description, listed.at + '.description');
    sqlText(entity.description, listed.at + '.description');
    if (entity.fields === undefined || entity.fields === null) return;
    if (!Array.isArray(entity.fields)) { errors.push('entity ' + entity.name + ': fields must be a list'); return; }
    var columns = byName({ id: 'the primary key', created_at: 'the timestamp created_at', updated_at: 'the timestamp updated_at' });
    var properties = byName({ createdAt: 'the timestamp createdAt', updatedAt: 'the timestamp updatedAt' });
    var primaryKey = null;
    entity.fields.forEach(function (field, index) {
      if (!field || typeof field !== 'object' || typeof field.name !== 'string' || !/[A-Za-z]/.test(words(field.name).join(' '))) {
        errors.push('entity ' + entity.name + ': fields[' + index + '] has no name');
        return;
      }
      var label = 'field ' + entity.name + '.' + field.name;
      var path = listed.at + '.fields[' + index + ']';
      var column = snake(field.name);
      // `id`, `ID` and `Id` all name the primary key, which the kit writes itself, always a uuid.
      if (column === 'id') {
        if (primaryKey) errors.push(label + ' and ' + primaryKey + ' both become the primary key "id"');
        else primaryKey = label;
        var keyProblem = idTypeProblem(field);
        if (keyProblem) errors.push(label + keyProblem);
      } else {
        // PostgreSQL refuses these in CREATE TABLE, quoted or not: the whole script would fail.
        if (SYSTEM_COLUMNS[column]) errors.push(label + ' becomes column "' + column + '", which PostgreSQL reserves for a system column (' + Object.keys(SYSTEM_COLUMNS).join(', ') + ')');
        if (columns[column]) errors.push(label + ' and ' + columns[column] + ' both become column "' + column + '"');
        else columns[column] = 'field ' + entity.name + '.' + field.name;
        var property = camel(field.name);
        if (properties[property]) errors.push(label + ' and ' + properties[property] + ' both become property "' + property + '"');
        else properties[property] = 'field ' + entity.name + '.' + field.name;
      }
      // From here, the field rules openapi-api and project-docs apply too (project-docs all but
      // maxLength), with the same messages: composite-bundle.test.ts runs the three on the same fields.
      // Other kits read `required` as `=== true`; "yes" must not mean NOT NULL here and optional there.
      if (field.required !== undefined && field.required !== null && typeof field.required !== 'boolean') {
        errors.push(label + ' has required ' + JSON.stringify(field.required) + '; it must be true or false');
      }
      optionalText(field.type, path + '.type');
      optionalText(field.description, path + '.description');
      if (field.type === 'enum' && (!Array.isArray(field.values) || field.values.length === 0)) errors.push(label + ' is an enum without values');
      else if (field.type === 'enum') {
        field.values.forEach(function (value, valueIndex) {
          if (typeof value !== 'string') errors.push(path + '.values[' + valueIndex + '] must be text, not ' + kindOf(value));
          else sqlText(value, path + '.values[' + valueIndex + ']');
        });
      }
      var lengthProblem = maxLengthProblem(field);
      if (lengthProblem) errors.push(label + lengthProblem);
      if (field.type === 'reference') {
        if (field.entity === undefined || field.entity === null) errors.push(path + '.entity is missing: a reference names the entity it points to');
        else if (typeof field.entity !== 'string') errors.push(path + '.entity must be text, not ' + kindOf(field.entity));
        else if (!names[field.entity.toLowerCase()]) errors.push(label + ' references unknown entity ' + JSON.stringify(field.entity));
      }
    });
  });
  return { errors: errors };
}
