// The index's heading prints the company name: a line break in it would end the heading (a
// `<!--`, a fence or a `---` on the next line would hide the table or turn it into something
// else), and a name that starts with `#`, `<`, `-` … would start a block of its own. The
// project-docs kit prints the name the same way (kits/project-docs/hooks/plan.js, lineStart).
function oneLine(text) { return String(text).replace(/[\r\n]+/g, ' '); }
function lineStart(text) {
  var line = oneLine(text).replace(/^[ \t]+/, '');
  if (/^\d{1,9}[.)](?=[ \t]|$)/.test(line)) return line.replace(/^(\d{1,9})/, '$1\\');
  return line.replace(/^(?=`{3,}[^`]*$|~{3}|#|>|<[A-Za-z\/!?]|[-+*](?:[ \t]|$)|([-*_])[ \t]*(?:\1[ \t]*){2,}$)/, '\\');
}

function plan(context) {
  return { data: { name: lineStart(context.input.businessProfile.company.name) } };
}
