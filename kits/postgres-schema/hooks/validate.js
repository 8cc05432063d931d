// Cheap static checks of the generated SQL: balanced parentheses and quotes in every statement.
function validate(context) {
  var findings = {};
  context.outputs.forEach(function (output) {
    if (output.outputType !== 'code') return;
    var errors = [];
    var depth = 0;
    var quotes = 0;
    for (var i = 0; i < output.content.length; i++) {
      var c = output.content[i];
      if (c === "'") quotes++;
      else if (quotes % 2 === 0 && c === '(') depth++;
      else if (quotes % 2 === 0 && c === ')') depth--;
      if (depth < 0) { errors.push('unbalanced ")"'); break; }
    }
    if (depth > 0) errors.push('unbalanced "("');
    if (quotes % 2 === 1) errors.push('unterminated string literal');
    if (!/CREATE TABLE/.test(output.content)) errors.push('no CREATE TABLE statement');
    findings[output.outputId] = { errors: errors };
  });
  return { outputs: findings };
}
