// The default CHECK has already made sure discoveryAnswers.entities is there; this one checks what
// the DDL depends on: unique entity names and references to entities that exist.
function check(context) {
  var entities = context.input.discoveryAnswers.entities;
  var errors = [];
  if (!Array.isArray(entities) || entities.length === 0) return { errors: ['discoveryAnswers.entities must be a non-empty list'] };
  var names = {};
  entities.forEach(function (entity, index) {
    var name = typeof entity === 'string' ? entity : entity && entity.name;
    if (typeof name !== 'string' || !/[A-Za-z]/.test(name)) errors.push('discoveryAnswers.entities[' + index + '] has no name');
    else if (names[name.toLowerCase()]) errors.push('entity ' + name + ' is declared twice');
    else names[name.toLowerCase()] = true;
  });
  entities.forEach(function (entity) {
    ((entity && entity.fields) || []).forEach(function (field) {
      if (field.type === 'reference' && !names[String(field.entity || '').toLowerCase()]) {
        errors.push('field ' + entity.name + '.' + field.name + ' references unknown entity ' + JSON.stringify(field.entity));
      }
    });
  });
  return { errors: errors };
}
