import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed documents for the REST routes and the tests, generated from the committed SDL.
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['src/rest/operations.ts'],
  ignoreNoDocuments: false,
  generates: {
    'src/rest/__generated__/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        enumsAsTypes: true,
        useTypeImports: true,
        emitLegacyCommonJSImports: false,
        scalars: { Int64: 'number', ID: 'string' },
      },
    },
  },
};

export default config;
