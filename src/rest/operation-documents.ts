import { graphql } from './__generated__/index.js';

// The operations the REST routes run. Parsed at build time by codegen, validated at start.

export const ListPetsOperation = graphql(/* GraphQL */ `
  query ListPets($limit: Int, $status: PetStatus, $cursor: String) {
    petsConnection(first: $limit, status: $status, after: $cursor) {
      nodes {
        ...RestPet
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

export const CreatePetOperation = graphql(/* GraphQL */ `
  mutation CreatePet($input: NewPet!) {
    createPet(input: $input) {
      ...RestPet
    }
  }
`);

export const GetPetOperation = graphql(/* GraphQL */ `
  query GetPet($petId: ID!) {
    pet(id: $petId) {
      ...RestPet
    }
  }
`);

export const RestPetFragment = graphql(/* GraphQL */ `
  fragment RestPet on Pet {
    id
    name
    categoryId
    status
  }
`);
