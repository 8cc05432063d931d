// Reads the branch back: the commit APPLY made must be on it, holding exactly the files rendered.
async function verify(context, kit) {
  if (!context.applyResult) {
    var why = context.options.dryRun ? 'dry run' : context.options.skipApply ? 'skipApply' : 'APPLY did not run';
    return { warnings: ['nothing to verify: ' + why] };
  }
  var plan = context.plan.data;
  var found = await kit.gitVerify({
    repository: plan.repository,
    branch: plan.branch,
    directory: plan.directory,
    commit: context.applyResult.commit,
    files: context.outputs.map(function (output) { return { path: output.filename, content: output.content }; }),
    credential: 'git-token',
  });
  var errors = [];
  if (!found.onBranch) errors.push('commit ' + context.applyResult.commit + ' is not on ' + plan.branch + ' (head ' + found.head + ')');
  found.missing.forEach(function (path) { errors.push(path + ' is missing from the commit'); });
  found.different.forEach(function (path) { errors.push(path + ' differs from the rendered output'); });
  var warnings = found.head !== context.applyResult.commit && found.onBranch ? [plan.branch + ' has moved on to ' + found.head] : [];
  return { errors: errors, warnings: warnings };
}
