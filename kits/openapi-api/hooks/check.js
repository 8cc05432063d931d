// The default CHECK has already made sure the required inputs are there; this one checks what the
// document depends on: every entity and field has a name that survives being reduced to letters
// and digits, no two names become the same schema, path or property, and operations are known.
// The name helpers are plan.js's: the checks must see the names the plan will print.
function words(name) {
  return String(name).replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[^A-Za-z0-9]+/).filter(Boolean);
}
function pascal(name) {
  return words(name).map(function (w) { return w.charAt(0).toUpperCase() + w.slice(1); }).join('');
}
function camel(name) {
  var p = pascal(name);
  return p.charAt(0).toLowerCase() + p.slice(1);
}
function plural(word) {
  if (/[^aeiou]y$/i.test(word)) return word.slice(0, -1) + 'ies';
  if (/(s|x|z|ch|sh)$/i.test(word)) return word + 'es';
  return word + 's';
}
function kebab(name) {
  return words(name).map(function (w) { return w.toLowerCase(); }).join('-');
}
var ALL_OPERATIONS = ['list', 'get', 'create', 'update', 'delete'];

function check(context) {
  var entities = context.input.discoveryAnswers.entities;
  if (!Array.isArray(entities)) return { errors: ['discoveryAnswers.entities must be a list'] };
  var errors = [];
  var schemas = { Error: 'the error model' };
  var paths = {};
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
    claim(schemas, name, owner, 'schema');
    claim(schemas, name + 'Input', owner, 'schema');
    claim(schemas, name + 'Patch', owner, 'schema');
    claim(paths, '/' + plural(kebab(name)), owner, 'path');
    if (entity.operations !== undefined && entity.operations !== null) {
      var unknown = (Array.isArray(entity.operations) ? entity.operations : [entity.operations]).filter(function (op) { return ALL_OPERATIONS.indexOf(op) === -1; });
      if (!Array.isArray(entity.operations) || unknown.length) {
        errors.push(owner + ' has unknown operations ' + JSON.stringify(unknown) + '; known: ' + ALL_OPERATIONS.join(', '));
      }
    }
    if (entity.fields === undefined || entity.fields === null) return;
    if (!Array.isArray(entity.fields)) { errors.push(owner + ': fields must be a list'); return; }
    var properties = {};
    entity.fields.forEach(function (field, fieldIndex) {
      if (!field || typeof field !== 'object' || typeof field.name !== 'string' || camel(field.name) === '') {
        errors.push(owner + ': fields[' + fieldIndex + '] has no name with Latin letters or digits');
        return;
      }
      claim(properties, camel(field.name), 'field ' + name + '.' + field.name, 'property');
      if (field.type === 'enum' && (!Array.isArray(field.values) || field.values.length === 0)) errors.push('field ' + name + '.' + field.name + ' is an enum without values');
    });
  });
  return { errors: errors };
}
