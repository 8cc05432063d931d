// The default CHECK made sure the repository URL is there; this one makes sure it is usable.
function check(context) {
  var repository = context.input.discoveryAnswers.repository;
  var errors = [];
  if (!/^https?:\/\/[^\s@]+$/.test(String(repository.url))) errors.push('discoveryAnswers.repository.url must be an http(s) URL without credentials');
  if (repository.branch !== undefined && !/^[A-Za-z0-9._\/-]{1,200}$/.test(String(repository.branch))) errors.push('discoveryAnswers.repository.branch is not a valid branch name');
  return { errors: errors };
}
