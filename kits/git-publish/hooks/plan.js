// Where the files go and what the commit says; templates and APPLY/VERIFY read it from @plan.
function plan(context) {
  var repository = context.input.discoveryAnswers.repository;
  var entities = (context.input.discoveryAnswers.entities || []).map(function (e) { return typeof e === 'string' ? e : e.name; });
  return {
    data: {
      repository: String(repository.url),
      branch: repository.branch || 'main',
      directory: repository.directory || '',
      message: 'Specwright: ' + context.input.businessProfile.company.name + ' specification (' + context.kit.id + ' ' + context.kit.version + ')',
      entities: entities,
    },
  };
}
