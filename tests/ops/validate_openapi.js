// Validates an OpenAPI document with @apidevtools/swagger-parser: the document against the
// OpenAPI 3.0 schema, then the rules a schema cannot express (unique operationIds, path
// parameters declared, $refs resolvable). Usage: node validate_openapi.js docs/openapi.yaml
'use strict';
const SwaggerParser = require('@apidevtools/swagger-parser');

async function main() {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node validate_openapi.js FILE');
    process.exit(2);
  }
  try {
    const api = await SwaggerParser.validate(file);
    const paths = Object.keys(api.paths);
    let operations = 0;
    for (const p of paths)
      operations += Object.keys(api.paths[p]).filter((m) => m !== 'parameters').length;
    console.log(`ok   ${file}: valid OpenAPI ${api.openapi} (${api.info.title} ${api.info.version}), ` +
      `${paths.length} paths, ${operations} operations`);
  } catch (err) {
    console.error(`FAIL ${file}: ${err.message}`);
    process.exit(1);
  }
}

main();
