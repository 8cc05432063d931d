// The default CHECK made sure the repository URL is there; this one makes sure what APPLY sends is
// usable, so a dry run refuses what the push would: the URL, the branch and the directory.
function check(context) {
  var repository = context.input.discoveryAnswers.repository;
  var errors = [];
  // Printed in the commit message and the README: a number or an object would read `42` or
  // `[object Object]`, and an entity without a name would fail PLAN.
  var name = context.input.businessProfile.company.name;
  if (typeof name !== 'string') errors.push('businessProfile.company.name must be text, not ' + kindOf(name));
  // project.json's schema takes text or null here: anything else would fail VALIDATE, and APPLY with it.
  var description = context.input.businessProfile.description;
  if (description !== undefined && description !== null && typeof description !== 'string') errors.push('businessProfile.description must be text, not ' + kindOf(description));
  var entities = context.input.discoveryAnswers.entities;
  if (entities !== undefined && entities !== null) {
    if (!Array.isArray(entities)) errors.push('discoveryAnswers.entities must be a list, not ' + kindOf(entities));
    else entities.forEach(function (entity, index) {
      var named = typeof entity === 'string' ? entity : entity !== null && typeof entity === 'object' && !Array.isArray(entity) ? entity.name : undefined;
      if (typeof named !== 'string' || named.trim() === '') errors.push('discoveryAnswers.entities[' + index + '] must be a name or an object with a name');
    });
  }
  // The scheme in any letter case, as URLs take it (`HTTPS://…`).
  if (!/^https?:\/\/[^\s@]+$/i.test(String(repository.url))) errors.push('discoveryAnswers.repository.url must be an http(s) URL without credentials');
  // A token in the query (`?private_token=…`) would be stored, and shown, with the run's input.
  else if (/[?#]/.test(String(repository.url))) errors.push('discoveryAnswers.repository.url must not carry a query or fragment: a token goes in the kit\'s credential');
  // A branch that is not text (0, false, ["x"]) names no branch the user could mean: read as none it
  // would publish to main, read as its text to another branch.
  if (repository.branch !== undefined && repository.branch !== null && typeof repository.branch !== 'string') {
    errors.push('discoveryAnswers.repository.branch must be text, not ' + kindOf(repository.branch));
  } else if (typeof repository.branch === 'string') {
    var problem = branchProblem(repository.branch);
    if (problem) errors.push('discoveryAnswers.repository.branch is not a valid branch name: ' + problem);
  }
  if (repository.directory !== undefined && repository.directory !== null) {
    var unsafe = typeof repository.directory === 'string' && directoryProblem(repository.directory);
    if (typeof repository.directory !== 'string') errors.push('discoveryAnswers.repository.directory must be a folder path');
    else if (repository.directory.split('/').some(namesGitDirectory)) errors.push('discoveryAnswers.repository.directory must not be .git or lie inside it');
    else if (unsafe) errors.push('discoveryAnswers.repository.directory ' + unsafe);
  }
  return { errors: errors };
}

// What a value is, for a message such as `… must be text, not a number`.
function kindOf(value) {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : 'a ' + typeof value;
}

// The git capability's rules and messages (kit-runtime/capabilities/git-commit.ts,
// explainInvalidBranch), which a hook cannot import: git check-ref-format's rules for
// refs/heads/<branch>, within the characters the capability takes (letters, digits, `.`, `_`, `/`,
// `-`; so no control characters, space, ~ ^ : ? * [ \ or @{).
function branchProblem(branch) {
  if (branch === 'HEAD' || branch === '@') return 'it cannot be ' + JSON.stringify(branch);
  if (!/^[A-Za-z0-9._\/-]{1,200}$/.test(branch)) return 'use 1 to 200 letters, digits, ".", "_", "/" and "-"';
  if (branch.charAt(0) === '-') return 'it cannot start with "-"';
  if (branch.indexOf('..') !== -1) return 'it cannot contain ".."';
  if (branch.charAt(0) === '/' || branch.charAt(branch.length - 1) === '/' || branch.indexOf('//') !== -1) return 'it cannot start or end with "/" or contain "//"';
  if (branch.charAt(branch.length - 1) === '.') return 'it cannot end with "."';
  var bad = branch.split('/').filter(function (part) { return part.charAt(0) === '.' || /\.lock$/.test(part); });
  if (bad.length) return 'no part may start with "." or end with ".lock" (' + JSON.stringify(bad[0]) + ')';
  return null;
}

// The git capability's rule (kit-runtime/capabilities/git-work-tree.ts, namesGitDirectory), which a
// hook cannot import: a name some file system reads as .git — any letter case, trailing dots and
// spaces, the 8.3 short name git~1, characters HFS+ ignores.
function namesGitDirectory(segment) {
  var name = segment.replace(/[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/g, '').toLowerCase().replace(/[. ]+$/, '');
  return name === '.git' || /^\.?git~[1-9]$/.test(name);
}

// The capability's path rule (kit-runtime/safe-path.ts, explainUnsafePath) with its messages, which
// a hook cannot import: APPLY refuses a directory that breaks it, so a dry run must too. Empty and
// "." segments are left out, as PLAN leaves them out ("specs/", "./specs" and "." are folders).
function directoryProblem(path) {
  if (path.length > 1024) return 'must be at most 1024 characters';
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'must not contain NUL or other control characters';
  if (/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(path)) return 'must not contain Unicode bidirectional controls (such as U+202E)';
  if (/[\u00ad\u180e\u200b\u2060-\u2064\ufeff\u2028\u2029]|\udb40[\udc00-\udc7f]/.test(path)) return 'must not contain invisible characters (such as U+200B) or line separators';
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(^|[^\ud800-\udbff])[\udc00-\udfff]/.test(path)) return 'must not contain unpaired UTF-16 surrogates';
  if (path.indexOf('\\') !== -1) return 'must use "/" as separator, not "\\"';
  if (path.charAt(0) === '/') return 'must be relative, not absolute';
  if (/^[a-zA-Z]:/.test(path)) return 'must be relative, not a drive path';
  if (/[:*?"<>|]/.test(path)) return 'must not contain any of : * ? " < > |';
  var segments = path.normalize('NFC').split('/');
  for (var i = 0; i < segments.length; i++) {
    var segment = segments[i];
    if (segment === '' || segment === '.') continue;
    if (segment === '..') return 'must not contain ".." segments';
    if (/^\.+$/.test(segment)) return 'must not contain dot-only segments';
    if (/[. ]$/.test(segment)) return 'must not have a segment ending in "." or " "';
    if (utf8Length(segment) > 255) return 'segments must be at most 255 bytes in UTF-8';
    if (/^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]|conin\$|conout\$) *(\..*)?$/i.test(segment)) return 'must not use the reserved device name "' + segment + '"';
  }
  return null;
}

function utf8Length(text) {
  var bytes = 0;
  for (var i = 0; i < text.length; i++) {
    var code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) { bytes += 4; i++; }
    else bytes += 3;
  }
  return bytes;
}
