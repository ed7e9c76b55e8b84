import { graphql } from './__generated__/gql.ts';

// The only operations this client can run: codegen turns each into its sha256 id, and the service
// runs them once `npm run documents -- publish` has stored the manifest.

export const PetFieldsFragment = graphql(/* GraphQL */ `
  fragment PetFields on Pet {
    id
    name
    categoryId
    status
  }
`);

export const ListPetsQuery = graphql(/* GraphQL */ `
  query ListPets($first: Int, $status: PetStatus) {
    petsConnection(first: $first, status: $status) {
      nodes {
        ...PetFields
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

// pet(id:) is deprecated (removed on 5 December 2030) but is the schema's only lookup by id.
export const GetPetQuery = graphql(/* GraphQL */ `
  query GetPet($id: ID!) {
    pet(id: $id) {
      ...PetFields
    }
  }
`);

export const CreatePetMutation = graphql(/* GraphQL */ `
  mutation CreatePet($input: NewPet!) {
    createPet(input: $input) {
      ...PetFields
    }
  }
`);

// Served over SSE by documentId like the others; `after` (a cursor from an earlier event) resumes.
export const PetCreatedSubscription = graphql(/* GraphQL */ `
  subscription PetCreated($status: PetStatus, $after: String) {
    petCreated(status: $status, after: $after) {
      cursor
      pet {
        ...PetFields
      }
    }
  }
`);
