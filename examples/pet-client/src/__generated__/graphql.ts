/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** A pet to add. The service assigns the id. Names hold 1 to 100 characters, not all whitespace, and no control or format characters or line separators (Unicode Cc, Cf, Zl, Zp). */
export type NewPet = {
  categoryId: number;
  name: string;
  /** Omit it to leave the status unset; null is refused. */
  status?: PetStatus | null | undefined;
};

/** Availability of a pet. The REST contract spells the values in lower case. */
export type PetStatus =
  | 'AVAILABLE'
  | 'PENDING'
  | 'SOLD';

export type PetFieldsFragment = { id: string, name: string, categoryId: number, status: PetStatus | null };

export type ListPetsQueryVariables = Exact<{
  first?: number | null | undefined;
  status?: PetStatus | null | undefined;
}>;


export type ListPetsQuery = { petsConnection: { nodes: Array<{ id: string, name: string, categoryId: number, status: PetStatus | null }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } };

export type GetPetQueryVariables = Exact<{
  id: string;
}>;


export type GetPetQuery = { pet: { id: string, name: string, categoryId: number, status: PetStatus | null } | null };

export type CreatePetMutationVariables = Exact<{
  input: NewPet;
}>;


export type CreatePetMutation = { createPet: { id: string, name: string, categoryId: number, status: PetStatus | null } };

export type PetCreatedSubscriptionVariables = Exact<{
  status?: PetStatus | null | undefined;
  after?: string | null | undefined;
}>;


export type PetCreatedSubscription = { petCreated: { cursor: string, pet: { id: string, name: string, categoryId: number, status: PetStatus | null } } };

export const PetFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"PetFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Pet"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"categoryId"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]} as unknown as DocumentNode<PetFieldsFragment, unknown>;
export const ListPetsDocument = {"__meta__":{"operationType":"query","hash":"sha256:75b04998fe967330ef2f05268094dbb864a6f16f11530b46625fdbf8d57a8168"}} as unknown as DocumentNode<ListPetsQuery, ListPetsQueryVariables>;
export const GetPetDocument = {"__meta__":{"operationType":"query","hash":"sha256:b542c25725f46f2c846e9b409537eab362c2d3b1449669ed9fb37bef7d339694"}} as unknown as DocumentNode<GetPetQuery, GetPetQueryVariables>;
export const CreatePetDocument = {"__meta__":{"operationType":"mutation","hash":"sha256:deaf41cb93ec84c69101af2cf9d500c2bcf7d346939884fdde4c61961e33efa4"}} as unknown as DocumentNode<CreatePetMutation, CreatePetMutationVariables>;
export const PetCreatedDocument = {"__meta__":{"operationType":"subscription","hash":"sha256:3ee28f2368a36cf2b75efc641860af481ec72efbd80dcff5142de891dceb2da0"}} as unknown as DocumentNode<PetCreatedSubscription, PetCreatedSubscriptionVariables>;