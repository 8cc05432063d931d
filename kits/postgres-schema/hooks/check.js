// The default CHECK has already made sure discoveryAnswers.entities is there; this one checks what
// the DDL depends on: every entity and field has a usable name, no two names become the same table,
// column or property once reduced to identifiers, enums have values, lengths fit PostgreSQL, and
// references name entities that exist.
// The name helpers are plan.js's: the checks must see the identifiers the plan will print.
function words(name) { return String(name).replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[^A-Za-z0-9]+/).filter(Boolean); }
function snake(name) { return words(name).map(function (w) { return w.toLowerCase(); }).join('_').slice(0, 55) || 'x'; }
function pascal(name) { return words(name).map(function (w) { return w.charAt(0).toUpperCase() + w.slice(1); }).join(''); }
function camel(name) { var p = pascal(name); return p.charAt(0).toLowerCase() + p.slice(1); }
function plural(word) {
  if (/[^aeiou]y$/.test(word)) return word.slice(0, -1) + 'ies';
  if (/(s|x|z|ch|sh)$/.test(word)) return word + 'es';
  return word + 's';
}
var MAX_VARCHAR = 10485760; // PostgreSQL's limit for varchar(n)

function check(context) {
  var entities = context.input.discoveryAnswers.entities;
  var errors = [];
  if (!Array.isArray(entities) || entities.length === 0) return { errors: ['discoveryAnswers.entities must be a non-empty list'] };
  var names = {};
  var tables = { schema_migrations: 'the migration table' };
  var valid = [];
  entities.forEach(function (entity, index) {
    var name = typeof entity === 'string' ? entity : entity && entity.name;
    if (typeof name !== 'string' || !/[A-Za-z]/.test(name)) { errors.push('discoveryAnswers.entities[' + index + '] has no name'); return; }
    if (names[name.toLowerCase()]) { errors.push('entity ' + name + ' is declared twice'); return; }
    names[name.toLowerCase()] = true;
    var table = plural(snake(name));
    if (tables[table]) errors.push('entity ' + JSON.stringify(name) + ' and ' + tables[table] + ' both become table "' + table + '"');
    else tables[table] = 'entity ' + JSON.stringify(name);
    valid.push(entity);
  });
  valid.forEach(function (entity) {
    if (typeof entity === 'string' || entity.fields === undefined || entity.fields === null) return;
    if (!Array.isArray(entity.fields)) { errors.push('entity ' + entity.name + ': fields must be a list'); return; }
    var columns = { id: 'the primary key', created_at: 'the timestamp created_at', updated_at: 'the timestamp updated_at' };
    var properties = { createdAt: 'the timestamp createdAt', updatedAt: 'the timestamp updatedAt' };
    entity.fields.forEach(function (field, index) {
      if (!field || typeof field !== 'object' || typeof field.name !== 'string' || !/[A-Za-z]/.test(field.name)) {
        errors.push('entity ' + entity.name + ': fields[' + index + '] has no name');
        return;
      }
      var label = 'field ' + entity.name + '.' + field.name;
      var column = snake(field.name);
      if (column !== 'id') {
        if (columns[column]) errors.push(label + ' and ' + columns[column] + ' both become column "' + column + '"');
        else columns[column] = 'field ' + entity.name + '.' + field.name;
        var property = camel(field.name);
        if (properties[property]) errors.push(label + ' and ' + properties[property] + ' both become property "' + property + '"');
        else properties[property] = 'field ' + entity.name + '.' + field.name;
      }
      if (field.type === 'enum' && (!Array.isArray(field.values) || field.values.length === 0)) errors.push(label + ' is an enum without values');
      if (field.type === 'string' && typeof field.maxLength === 'number'
        && !(Math.floor(field.maxLength) === field.maxLength && field.maxLength >= 1 && field.maxLength <= MAX_VARCHAR)) {
        errors.push(label + ' has maxLength ' + JSON.stringify(field.maxLength) + '; it must be a whole number from 1 to ' + MAX_VARCHAR);
      }
      if (field.type === 'reference' && !names[String(field.entity || '').toLowerCase()]) {
        errors.push(label + ' references unknown entity ' + JSON.stringify(field.entity));
      }
    });
  });
  return { errors: errors };
}
