// The default CHECK made sure the required inputs are there; this one checks what PLAN and the
// templates read from them: every entity, field, integration and decision is an object with a name
// or title (a null entry would fail PLAN with a JavaScript error, an untitled decision would be
// `0003-undefined.md`), and `required` is true or false, as the other kits read it.
function check(context) {
  var answers = context.input.discoveryAnswers;
  var errors = [];
  function text(value) { return typeof value === 'string' && value.trim() !== ''; }
  function isObject(value) { return value !== null && typeof value === 'object' && !Array.isArray(value); }
  function list(value, where, each) {
    if (value === undefined || value === null) return;
    if (!Array.isArray(value)) { errors.push(where + ' must be a list'); return; }
    value.forEach(function (item, index) { each(item, where + '[' + index + ']'); });
  }

  list(answers.entities, 'discoveryAnswers.entities', function (raw, where) {
    var entity = typeof raw === 'string' ? { name: raw } : raw;
    if (!isObject(entity) || !text(entity.name)) { errors.push(where + ' must be a name or an object with a name'); return; }
    list(entity.fields, 'entity ' + JSON.stringify(entity.name) + ': fields', function (field, at) {
      if (!isObject(field) || !text(field.name)) { errors.push(at + ' must be an object with a name'); return; }
      if (field.required !== undefined && field.required !== null && typeof field.required !== 'boolean') {
        errors.push('field ' + entity.name + '.' + field.name + ' has required ' + JSON.stringify(field.required) + '; it must be true or false');
      }
    });
  });
  if (isObject(answers.architecture)) {
    list(answers.architecture.integrations, 'discoveryAnswers.architecture.integrations', function (item, where) {
      if (!text(item) && !(isObject(item) && text(item.name))) errors.push(where + ' must be a name or an object with a name');
    });
  }
  list(answers.decisions, 'discoveryAnswers.decisions', function (decision, where) {
    if (!isObject(decision)) { errors.push(where + ' must be an object with a title'); return; }
    if (!text(decision.title)) errors.push(where + ' has no title');
    if (decision.status !== undefined && decision.status !== null && typeof decision.status !== 'string') errors.push(where + ': status must be text');
  });
  return { errors: errors };
}
