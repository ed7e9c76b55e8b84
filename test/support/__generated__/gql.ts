/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  fragment PetFields on Pet {\n    id\n    name\n    categoryId\n    status\n  }\n": typeof types.PetFieldsFragmentDoc,
    "\n  mutation CreatePet($input: NewPet!) {\n    createPet(input: $input) {\n      ...PetFields\n    }\n  }\n": typeof types.CreatePetDocument,
    "\n  query Pets($limit: Int, $status: PetStatus, $after: String) {\n    pets(limit: $limit, status: $status, after: $after) {\n      ...PetFields\n    }\n  }\n": typeof types.PetsDocument,
    "\n  query PetsPage($first: Int, $after: String, $status: PetStatus) {\n    petsConnection(first: $first, after: $after, status: $status) {\n      edges {\n        cursor\n        node {\n          id\n          name\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        endCursor\n      }\n    }\n  }\n": typeof types.PetsPageDocument,
    "\n  query Pet($id: ID!) {\n    pet(id: $id) {\n      ...PetFields\n    }\n  }\n": typeof types.PetDocument,
    "\n  query DeepestAllowed {\n    petsConnection {\n      edges {\n        node {\n          id\n        }\n      }\n      pageInfo {\n        endCursor\n      }\n    }\n    __typename\n  }\n": typeof types.DeepestAllowedDocument,
    "\n  query QueryTypeName {\n    __schema {\n      queryType {\n        name\n      }\n    }\n  }\n": typeof types.QueryTypeNameDocument,
    "\n  query QueryFields {\n    __type(name: \"Query\") {\n      fields(includeDeprecated: true) {\n        name\n        isDeprecated\n        deprecationReason\n      }\n    }\n  }\n": typeof types.QueryFieldsDocument,
};
const documents: Documents = {
    "\n  fragment PetFields on Pet {\n    id\n    name\n    categoryId\n    status\n  }\n": types.PetFieldsFragmentDoc,
    "\n  mutation CreatePet($input: NewPet!) {\n    createPet(input: $input) {\n      ...PetFields\n    }\n  }\n": types.CreatePetDocument,
    "\n  query Pets($limit: Int, $status: PetStatus, $after: String) {\n    pets(limit: $limit, status: $status, after: $after) {\n      ...PetFields\n    }\n  }\n": types.PetsDocument,
    "\n  query PetsPage($first: Int, $after: String, $status: PetStatus) {\n    petsConnection(first: $first, after: $after, status: $status) {\n      edges {\n        cursor\n        node {\n          id\n          name\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        endCursor\n      }\n    }\n  }\n": types.PetsPageDocument,
    "\n  query Pet($id: ID!) {\n    pet(id: $id) {\n      ...PetFields\n    }\n  }\n": types.PetDocument,
    "\n  query DeepestAllowed {\n    petsConnection {\n      edges {\n        node {\n          id\n        }\n      }\n      pageInfo {\n        endCursor\n      }\n    }\n    __typename\n  }\n": types.DeepestAllowedDocument,
    "\n  query QueryTypeName {\n    __schema {\n      queryType {\n        name\n      }\n    }\n  }\n": types.QueryTypeNameDocument,
    "\n  query QueryFields {\n    __type(name: \"Query\") {\n      fields(includeDeprecated: true) {\n        name\n        isDeprecated\n        deprecationReason\n      }\n    }\n  }\n": types.QueryFieldsDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment PetFields on Pet {\n    id\n    name\n    categoryId\n    status\n  }\n"): (typeof documents)["\n  fragment PetFields on Pet {\n    id\n    name\n    categoryId\n    status\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreatePet($input: NewPet!) {\n    createPet(input: $input) {\n      ...PetFields\n    }\n  }\n"): (typeof documents)["\n  mutation CreatePet($input: NewPet!) {\n    createPet(input: $input) {\n      ...PetFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Pets($limit: Int, $status: PetStatus, $after: String) {\n    pets(limit: $limit, status: $status, after: $after) {\n      ...PetFields\n    }\n  }\n"): (typeof documents)["\n  query Pets($limit: Int, $status: PetStatus, $after: String) {\n    pets(limit: $limit, status: $status, after: $after) {\n      ...PetFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PetsPage($first: Int, $after: String, $status: PetStatus) {\n    petsConnection(first: $first, after: $after, status: $status) {\n      edges {\n        cursor\n        node {\n          id\n          name\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        endCursor\n      }\n    }\n  }\n"): (typeof documents)["\n  query PetsPage($first: Int, $after: String, $status: PetStatus) {\n    petsConnection(first: $first, after: $after, status: $status) {\n      edges {\n        cursor\n        node {\n          id\n          name\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        endCursor\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Pet($id: ID!) {\n    pet(id: $id) {\n      ...PetFields\n    }\n  }\n"): (typeof documents)["\n  query Pet($id: ID!) {\n    pet(id: $id) {\n      ...PetFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query DeepestAllowed {\n    petsConnection {\n      edges {\n        node {\n          id\n        }\n      }\n      pageInfo {\n        endCursor\n      }\n    }\n    __typename\n  }\n"): (typeof documents)["\n  query DeepestAllowed {\n    petsConnection {\n      edges {\n        node {\n          id\n        }\n      }\n      pageInfo {\n        endCursor\n      }\n    }\n    __typename\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query QueryTypeName {\n    __schema {\n      queryType {\n        name\n      }\n    }\n  }\n"): (typeof documents)["\n  query QueryTypeName {\n    __schema {\n      queryType {\n        name\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query QueryFields {\n    __type(name: \"Query\") {\n      fields(includeDeprecated: true) {\n        name\n        isDeprecated\n        deprecationReason\n      }\n    }\n  }\n"): (typeof documents)["\n  query QueryFields {\n    __type(name: \"Query\") {\n      fields(includeDeprecated: true) {\n        name\n        isDeprecated\n        deprecationReason\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;