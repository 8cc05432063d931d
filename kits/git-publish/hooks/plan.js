// Where the files go and what the commit says; templates and APPLY/VERIFY read it from @plan.
// Names go on one line: in the commit message a line break in the company name would split the
// subject (a blank line starts the body), and in the README it would end the heading (a following
// `---` line turns the text above it into a heading of its own).
function oneLine(text) { return String(text).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim(); }

// The folder as the git capability takes it: "specs/", "./specs" and "specs//v1" name folders, and
// "." the repository's root, but the capability reads a trailing "/" as a file name left out and "."
// as no name at all, and refuses them. CHECK has refused what lies outside the repository.
function folderOf(directory) {
  return directory.split('/').filter(function (segment) { return segment !== '' && segment !== '.'; }).join('/');
}

function plan(context) {
  var repository = context.input.discoveryAnswers.repository;
  var entities = (context.input.discoveryAnswers.entities || []).map(function (e) { return typeof e === 'string' ? e : e.name; });
  var company = oneLine(context.input.businessProfile.company.name);
  return {
    data: {
      repository: String(repository.url),
      branch: typeof repository.branch === 'string' ? repository.branch : 'main',
      directory: typeof repository.directory === 'string' ? folderOf(repository.directory) : '',
      company: company,
      message: 'Specwright: ' + company + ' specification (' + context.kit.id + ' ' + context.kit.version + ')',
      entities: entities,
      entityNames: entities.map(oneLine),
    },
  };
}
