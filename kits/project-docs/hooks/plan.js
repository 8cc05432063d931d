// Shapes the business profile and discovery answers into what the documents print: entity
// relationships for the ER diagram, components for the context diagram, and numbered decisions.
// Accented Latin letters keep their base letter (`Größe` → `Grosse`) instead of disappearing.
function latin(text) { return String(text).normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/ß/g, 'ss'); }
function words(name) { return latin(name).replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[^A-Za-z0-9]+/).filter(Boolean); }
function pascal(name) { return words(name).map(function (w) { return w.charAt(0).toUpperCase() + w.slice(1); }).join('') || 'Entity'; }
function slug(text) { return latin(text).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60).replace(/-+$/, '') || 'decision'; }
// Mermaid labels go inside "…"; a quote or a newline would end them early.
function label(text) { return String(text).replace(/"/g, '#quot;').replace(/[\r\n]+/g, ' '); }
// Text in a Markdown table cell: a "|" would start a new cell and a line break would end the row.
function cell(text) { return String(text).replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' '); }
// A heading or a line such as `Status: …`: a line break would start a heading or a paragraph of its own.
function oneLine(text) { return String(text).replace(/[\r\n]+/g, ' '); }
// A Mermaid ER attribute name is a word that starts with a letter or `_`; PK, FK and UK are keys.
function attributeName(name) {
  var word = latin(name).replace(/[^A-Za-z0-9_]/g, '_');
  return /^[A-Za-z_]/.test(word) && !/^(PK|FK|UK)$/.test(word) ? word : '_' + word;
}
function isKey(name) { return words(name).join('_').toLowerCase() === 'id'; }
function pad(n) { return ('000' + n).slice(-4); }
var ER_TYPES = { uuid: 'uuid', string: 'string', text: 'text', integer: 'int', number: 'decimal', boolean: 'boolean', date: 'date', datetime: 'timestamp', email: 'string', enum: 'string', reference: 'uuid' };

function plan(context) {
  var profile = context.input.businessProfile;
  var answers = context.input.discoveryAnswers;
  var architecture = answers.architecture || {};
  var entities = answers.entities.map(function (raw) {
    var entity = typeof raw === 'string' ? { name: raw } : raw;
    var fields = (entity.fields || []).map(function (f) {
      return {
        name: attributeName(f.name),
        type: ER_TYPES[f.type] || 'string',
        key: isKey(f.name) ? 'PK' : f.type === 'reference' ? 'FK' : '',
        required: f.required === true,
        description: cell(f.description || (f.type === 'enum' ? 'one of ' + (f.values || []).join(', ') : '')),
        docType: cell(f.type === 'reference' ? 'reference to ' + pascal(f.entity) : (f.type || 'string')),
        displayName: cell(f.name),
      };
    });
    return { name: pascal(entity.name), title: entity.name, description: entity.description || '', descriptionCell: cell(entity.description || ''), fields: fields, references: (entity.fields || []).filter(function (f) { return f.type === 'reference'; }) };
  });
  var relationships = [];
  entities.forEach(function (entity) {
    entity.references.forEach(function (ref) {
      relationships.push({ from: pascal(ref.entity), to: entity.name, label: label(ref.name), required: ref.required === true });
    });
  });
  var integrations = (architecture.integrations || []).map(function (item, index) {
    var it = typeof item === 'string' ? { name: item } : item;
    return { id: 'ext' + (index + 1), name: label(it.name), purpose: label(it.purpose || 'integration') };
  });
  var audience = (profile.audience && profile.audience.length ? profile.audience : ['users']).map(function (a, index) {
    return { id: 'actor' + (index + 1), name: label(a) };
  });
  var decisions = [{
    title: 'Record architecture decisions',
    context: 'Decisions about ' + profile.company.name + ' need to be understood by people who join later.',
    decision: 'Keep architecture decision records (ADRs) in docs/adr, one Markdown file per decision, numbered in order.',
    consequences: 'Every significant change comes with a short ADR; superseded ones stay, marked as such.',
  }].concat(answers.decisions || []).map(function (d, index) {
    var number = pad(index + 1);
    var status = d.status || 'Accepted';
    return {
      number: number, title: oneLine(d.title), titleCell: cell(d.title), file: number + '-' + slug(d.title) + '.md',
      context: d.context || '', decision: d.decision || '', consequences: d.consequences || '', status: oneLine(status), statusCell: cell(status),
    };
  });
  return {
    data: {
      name: profile.company.name,
      industry: profile.company.industry,
      description: profile.description || profile.company.name + ' (' + profile.company.industry + ').',
      goals: profile.goals || [],
      audience: audience,
      entities: entities,
      relationships: relationships,
      integrations: integrations,
      architecture: {
        style: architecture.style || 'modular monolith',
        runtime: architecture.runtime || 'not decided',
        database: architecture.database || 'not decided',
        deployment: architecture.deployment || 'not decided',
        databaseLabel: label(architecture.database || 'Database'),
        appLabel: label(profile.company.name + ' application'),
      },
      decisions: decisions,
    },
  };
}
