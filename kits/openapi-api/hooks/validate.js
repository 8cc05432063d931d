// Checks the JSON Schema cannot express: operation ids are unique, and every entity the discovery
// answers name appears as a schema in the document.
function validate(context) {
  var doc = context.outputs.filter(function (o) { return o.outputId === 'openapi'; })[0];
  if (!doc) return null;
  var errors = [];
  var ids = {};
  var pattern = /operationId: "([^"]+)"/g;
  var match;
  while ((match = pattern.exec(doc.content)) !== null) {
    if (ids[match[1]]) errors.push('operationId "' + match[1] + '" is used twice');
    ids[match[1]] = true;
  }
  // A schema's key is `"Name":`, or `? "Name"` when the name is too long for a plain YAML key.
  context.plan.data.entities.forEach(function (entity) {
    var key = '"' + entity.name + '"';
    if (doc.content.indexOf('\n    ' + key + ':\n') === -1 && doc.content.indexOf('\n    ? ' + key + '\n') === -1) errors.push('entity ' + entity.name + ' has no schema');
  });
  return { outputs: { openapi: { errors: errors } } };
}
