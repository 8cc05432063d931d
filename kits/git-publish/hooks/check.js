// The default CHECK made sure the repository URL is there; this one makes sure what APPLY sends is
// usable, so a dry run refuses what the push would: the URL, the branch and the directory.
function check(context) {
  var repository = context.input.discoveryAnswers.repository;
  var errors = [];
  // Printed in the commit message and the README: a number or an object would read `42` or
  // `[object Object]`, and an entity without a name would fail PLAN.
  var name = context.input.businessProfile.company.name;
  if (typeof name !== 'string') errors.push('businessProfile.company.name must be text, not ' + kindOf(name));
  var entities = context.input.discoveryAnswers.entities;
  if (entities !== undefined && entities !== null) {
    if (!Array.isArray(entities)) errors.push('discoveryAnswers.entities must be a list, not ' + kindOf(entities));
    else entities.forEach(function (entity, index) {
      var named = typeof entity === 'string' ? entity : entity !== null && typeof entity === 'object' && !Array.isArray(entity) ? entity.name : undefined;
      if (typeof named !== 'string' || named.trim() === '') errors.push('discoveryAnswers.entities[' + index + '] must be a name or an object with a name');
    });
  }
  if (!/^https?:\/\/[^\s@]+$/.test(String(repository.url))) errors.push('discoveryAnswers.repository.url must be an http(s) URL without credentials');
  // A token in the query (`?private_token=…`) would be stored, and shown, with the run's input.
  else if (/[?#]/.test(String(repository.url))) errors.push('discoveryAnswers.repository.url must not carry a query or fragment: a token goes in the kit\'s credential');
  if (repository.branch !== undefined) {
    var problem = branchProblem(String(repository.branch));
    if (problem) errors.push('discoveryAnswers.repository.branch is not a valid branch name: ' + problem);
  }
  if (repository.directory !== undefined && repository.directory !== null) {
    var outside = typeof repository.directory === 'string' && pathOutsideProblem(repository.directory);
    if (typeof repository.directory !== 'string') errors.push('discoveryAnswers.repository.directory must be a folder path');
    else if (outside) errors.push('discoveryAnswers.repository.directory ' + outside);
    else if (repository.directory.split('/').some(namesGitDirectory)) errors.push('discoveryAnswers.repository.directory must not be .git or lie inside it');
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

// The part of the capability's path rule (kit-runtime/safe-path.ts, explainUnsafePath) that keeps a
// folder inside the repository, with its messages: not absolute in any platform's spelling, no `..`.
function pathOutsideProblem(path) {
  if (path.indexOf('\\') !== -1) return 'must use "/" as separator, not "\\"';
  if (path.charAt(0) === '/') return 'must be relative, not absolute';
  if (/^[a-zA-Z]:/.test(path)) return 'must be relative, not a drive path';
  if (path.split('/').indexOf('..') !== -1) return 'must not contain ".." segments';
  return null;
}
