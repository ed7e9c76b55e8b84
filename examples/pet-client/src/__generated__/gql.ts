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
    "\n  query ListPets($first: Int, $status: PetStatus) {\n    petsConnection(first: $first, status: $status) {\n      nodes {\n        ...PetFields\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n": typeof types.ListPetsDocument,
    "\n  query GetPet($id: ID!) {\n    pet(id: $id) {\n      ...PetFields\n    }\n  }\n": typeof types.GetPetDocument,
    "\n  mutation CreatePet($input: NewPet!) {\n    createPet(input: $input) {\n      ...PetFields\n    }\n  }\n": typeof types.CreatePetDocument,
    "\n  subscription PetCreated($status: PetStatus, $after: String) {\n    petCreated(status: $status, after: $after) {\n      cursor\n      pet {\n        ...PetFields\n      }\n    }\n  }\n": typeof types.PetCreatedDocument,
};
const documents: Documents = {
    "\n  fragment PetFields on Pet {\n    id\n    name\n    categoryId\n    status\n  }\n": types.PetFieldsFragmentDoc,
    "\n  query ListPets($first: Int, $status: PetStatus) {\n    petsConnection(first: $first, status: $status) {\n      nodes {\n        ...PetFields\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n": types.ListPetsDocument,
    "\n  query GetPet($id: ID!) {\n    pet(id: $id) {\n      ...PetFields\n    }\n  }\n": types.GetPetDocument,
    "\n  mutation CreatePet($input: NewPet!) {\n    createPet(input: $input) {\n      ...PetFields\n    }\n  }\n": types.CreatePetDocument,
    "\n  subscription PetCreated($status: PetStatus, $after: String) {\n    petCreated(status: $status, after: $after) {\n      cursor\n      pet {\n        ...PetFields\n      }\n    }\n  }\n": types.PetCreatedDocument,
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
export function graphql(source: "\n  query ListPets($first: Int, $status: PetStatus) {\n    petsConnection(first: $first, status: $status) {\n      nodes {\n        ...PetFields\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n"): (typeof documents)["\n  query ListPets($first: Int, $status: PetStatus) {\n    petsConnection(first: $first, status: $status) {\n      nodes {\n        ...PetFields\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GetPet($id: ID!) {\n    pet(id: $id) {\n      ...PetFields\n    }\n  }\n"): (typeof documents)["\n  query GetPet($id: ID!) {\n    pet(id: $id) {\n      ...PetFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreatePet($input: NewPet!) {\n    createPet(input: $input) {\n      ...PetFields\n    }\n  }\n"): (typeof documents)["\n  mutation CreatePet($input: NewPet!) {\n    createPet(input: $input) {\n      ...PetFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription PetCreated($status: PetStatus, $after: String) {\n    petCreated(status: $status, after: $after) {\n      cursor\n      pet {\n        ...PetFields\n      }\n    }\n  }\n"): (typeof documents)["\n  subscription PetCreated($status: PetStatus, $after: String) {\n    petCreated(status: $status, after: $after) {\n      cursor\n      pet {\n        ...PetFields\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;