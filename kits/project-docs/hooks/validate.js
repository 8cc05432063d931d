// Every Mermaid block must open with a diagram type and close; ER diagrams may only name entities
// the discovery answers define (relationships read `"A" ||--o{ "B" : "label"`). Markdown has no
// schema, so these checks are the kit's own.
function validate(context) {
  var known = {};
  context.plan.data.entities.forEach(function (e) { known[e.name] = true; });
  var findings = {};
  context.outputs.forEach(function (output) {
    var errors = [];
    var blocks = output.content.split('```mermaid\n').slice(1);
    blocks.forEach(function (rest, index) {
      var end = rest.indexOf('\n```');
      if (end === -1) { errors.push('mermaid block ' + (index + 1) + ' is not closed'); return; }
      var body = rest.slice(0, end);
      var kind = body.split('\n')[0].trim().split(/\s+/)[0];
      if (['flowchart', 'erDiagram', 'sequenceDiagram', 'classDiagram'].indexOf(kind) === -1) errors.push('mermaid block ' + (index + 1) + ' has unknown diagram type ' + JSON.stringify(kind));
      if (kind === 'erDiagram') {
        body.split('\n').slice(1).forEach(function (line) {
          var rel = /^\s+"([^"]*)" [|}o][|o]--[|o][|{o] "([^"]*)" : "[^"]*"$/.exec(line);
          if (rel && (!known[rel[1]] || !known[rel[2]])) errors.push('ER relationship names an unknown entity: ' + line.trim());
        });
      }
    });
    if (output.outputId === 'architecture' && blocks.length < 2) errors.push('the architecture overview needs its context and ER diagrams');
    findings[output.outputId] = { errors: errors };
  });
  return { outputs: findings };
}
