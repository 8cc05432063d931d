// Cheap static checks of the generated SQL: balanced parentheses and quotes in every statement.
// `--` comments (which carry the company name) are skipped: an apostrophe or a parenthesis there is
// not SQL.
function validate(context) {
  var findings = {};
  context.outputs.forEach(function (output) {
    if (output.outputType !== 'code') return;
    var errors = [];
    var depth = 0;
    var inString = false;
    var content = output.content;
    for (var i = 0; i < content.length; i++) {
      var c = content[i];
      if (inString) { if (c === "'") inString = false; continue; }
      if (c === '-' && content[i + 1] === '-') {
        var end = content.indexOf('\n', i);
        if (end === -1) break;
        i = end;
        continue;
      }
      if (c === "'") inString = true;
      else if (c === '(') depth++;
      else if (c === ')') depth--;
      if (depth < 0) { errors.push('unbalanced ")"'); break; }
    }
    if (depth > 0) errors.push('unbalanced "("');
    if (inString) errors.push('unterminated string literal');
    if (!/CREATE TABLE/.test(content)) errors.push('no CREATE TABLE statement');
    findings[output.outputId] = { errors: errors };
  });
  return { outputs: findings };
}
