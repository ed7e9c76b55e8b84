/** Lifecycle of the deprecated "get one pet" operation, shared by its GraphQL and REST faces. */

/** When this gateway first published getPet as deprecated (RFC 9745 wants a date; the spec gives none). */
export const GET_PET_DEPRECATED_AT = new Date('2026-11-22T00:00:00Z');

/** The removal date the spec announces. */
export const GET_PET_SUNSET = new Date('2030-12-05T00:00:00Z');

export const GET_PET_DEPRECATION_REASON =
  'Use `pets(status:)` instead; `pet(id:)` and REST GET /pets/{petId} are removed on 5 December 2030.';
