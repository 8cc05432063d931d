// The bundle is useful only when every part is there: each component must have produced at least
// one output, and the index must list only folders that exist.
function validate(context) {
  var prefixes = ['api', 'database', 'documentation'];
  var errors = [];
  prefixes.forEach(function (prefix) {
    var produced = context.outputs.filter(function (o) { return o.outputId.indexOf(prefix + '.') === 0; });
    if (produced.length === 0) errors.push('component "' + prefix + '" produced no outputs');
  });
  return { outputs: { index: { errors: errors } } };
}
