import { graphql } from './__generated__/gql.ts';

// The documents the tests send, typed by codegen (`npm run codegen`). Documents a test sends on
// purpose against a rule (too many aliases, too deep, a literal out of range) stay inline in that test.

export const PetFieldsFragment = graphql(/* GraphQL */ `
  fragment PetFields on Pet {
    id
    name
    categoryId
    status
  }
`);

export const CreatePetDocument = graphql(/* GraphQL */ `
  mutation CreatePet($input: NewPet!) {
    createPet(input: $input) {
      ...PetFields
    }
  }
`);

export const PetsDocument = graphql(/* GraphQL */ `
  query Pets($limit: Int, $status: PetStatus, $after: String) {
    pets(limit: $limit, status: $status, after: $after) {
      ...PetFields
    }
  }
`);

export const PetsPageDocument = graphql(/* GraphQL */ `
  query PetsPage($first: Int, $after: String, $status: PetStatus) {
    petsConnection(first: $first, after: $after, status: $status) {
      edges {
        cursor
        node {
          id
          name
        }
      }
      pageInfo {
        hasNextPage
        hasPreviousPage
        endCursor
      }
    }
  }
`);

export const PetDocument = graphql(/* GraphQL */ `
  query Pet($id: ID!) {
    pet(id: $id) {
      ...PetFields
    }
  }
`);

/** Six levels deep: the deepest document the depth limit lets through. */
export const DeepestAllowedDocument = graphql(/* GraphQL */ `
  query DeepestAllowed {
    petsConnection {
      edges {
        node {
          id
        }
      }
      pageInfo {
        endCursor
      }
    }
    __typename
  }
`);

export const QueryTypeNameDocument = graphql(/* GraphQL */ `
  query QueryTypeName {
    __schema {
      queryType {
        name
      }
    }
  }
`);

export const QueryFieldsDocument = graphql(/* GraphQL */ `
  query QueryFields {
    __type(name: "Query") {
      fields(includeDeprecated: true) {
        name
        isDeprecated
        deprecationReason
      }
    }
  }
`);
