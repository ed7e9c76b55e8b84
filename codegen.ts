import type { CodegenConfig } from '@graphql-codegen/cli';

// The same typing for every output: the REST routes and the tests read results shaped alike.
const clientPreset = {
  preset: 'client',
  presetConfig: { fragmentMasking: false },
  config: {
    enumsAsTypes: true,
    useTypeImports: true,
    emitLegacyCommonJSImports: false,
    scalars: { Int64: 'number', ID: 'string' },
  },
} satisfies CodegenConfig['generates'][string];

// Typed documents for the REST routes and the tests, generated from the committed SDL. Each output
// reads only its own documents, so a test operation never ships in the service's document map.
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  ignoreNoDocuments: false,
  generates: {
    'src/rest/__generated__/': { ...clientPreset, documents: ['src/rest/operations.ts'] },
    'test/support/__generated__/': { ...clientPreset, documents: ['test/support/operations.ts'] },
  },
};

export default config;
