import type { CodegenConfig } from '@graphql-codegen/cli';
import { type DocumentNode, getOperationAST } from 'graphql';

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

/**
 * The example client's documents hold no text, only their trusted-document id and their operation
 * type, which picks GET or POST. sha256 stated, not left to the preset's default (sha1 in older releases):
 * the service takes only GraphQL-over-HTTP's `sha256:` ids.
 */
export const petClientOutput = {
  ...clientPreset,
  presetConfig: {
    ...clientPreset.presetConfig,
    persistedDocuments: { mode: 'replaceDocumentWithHash', hashAlgorithm: 'sha256' },
    onExecutableDocumentNode: (document: DocumentNode) => ({ operationType: getOperationAST(document)?.operation }),
  },
  documents: ['examples/pet-client/src/operations.ts'],
} satisfies CodegenConfig['generates'][string];

export const PET_CLIENT_OUTPUT_DIR = 'examples/pet-client/src/__generated__/';

// Typed documents for the REST routes, the tests and the example client, generated from the
// committed SDL. Each output reads only its own documents, so a test operation never ships in the
// service's document map.
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  ignoreNoDocuments: false,
  generates: {
    'src/rest/__generated__/': { ...clientPreset, documents: ['src/rest/operation-documents.ts'] },
    'test/support/__generated__/': { ...clientPreset, documents: ['test/support/operations.ts'] },
    [PET_CLIENT_OUTPUT_DIR]: petClientOutput,
  },
};

export default config;
