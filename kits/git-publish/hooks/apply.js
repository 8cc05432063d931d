// Commits every output to the repository through the host's git capability. The hook names the
// credential; the host opens it, so the token never enters this sandbox.
async function apply(context, kit) {
  var plan = context.plan.data;
  var files = context.outputs.map(function (output) { return { path: output.filename, content: output.content }; });
  var result = await kit.gitCommit({
    repository: plan.repository,
    branch: plan.branch,
    directory: plan.directory,
    message: plan.message,
    files: files,
    credential: 'git-token',
  });
  kit.log('info', result.changed ? 'committed ' + result.commit + ' to ' + plan.branch : plan.branch + ' already holds these files at ' + result.commit);
  return { repository: plan.repository, branch: result.branch, commit: result.commit, parent: result.parent, changed: result.changed, files: files.map(function (f) { return f.path; }) };
}
