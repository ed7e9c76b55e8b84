/**
 * The REST contract of schema/openapi.yaml as types, so that tests read bodies with the compiler's
 * help, built from the service's status and error tables and the operations table below;
 * test/rest-contract-types.test.ts and test/rest-error-codes.test.ts fail when they and the
 * document part ways.
 */

import type { Pet } from '../../src/pets/pet.ts';
import { REST_ERRORS } from '../../src/rest/http-errors.ts';

// The service's own tables and domain types: the drift tests hold them to the document, so a test
// that reads a body through these types reads what the document promises.
export { type NewPet, PET_STATUSES, type Pet, type PetStatus } from '../../src/pets/pet.ts';

/** The closed set of Error codes, each with the one HTTP status the document's table gives it. */
export const ERROR_STATUS = REST_ERRORS;
export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

/** The body of every error answer; its code fixes its status. */
export type ErrorBody<C extends ErrorCode = ErrorCode> = {
  [K in C]: { code: K; message: string; status: (typeof ERROR_STATUS)[K] };
}[C];

/** A documented answer: the schema its body has (none: no body) and the headers it must carry (lower case). */
interface Documented {
  body?: keyof Schemas;
  headers: readonly string[];
}
/** On every answer of every operation: every path of the document needs a key. */
const SECURE = ['x-content-type-options', 'cache-control'] as const;
const ERROR = { body: 'Error', headers: SECURE } as const;
const UNAUTHENTICATED = { body: 'Error', headers: ['www-authenticate', ...SECURE] } as const;
const RETRY_LATER = { body: 'Error', headers: ['retry-after', ...SECURE] } as const;
const DEPRECATED = ['deprecation', 'sunset', 'link', ...SECURE] as const;
/** A GET's 200 and 304 carry its validator (conditional GETs). */
const VALIDATED = ['etag', 'vary'] as const;
const NOT_MODIFIED = { headers: [...VALIDATED, ...SECURE] } as const;

/** Each operation of the document with every status it documents. */
export const OPERATIONS = {
  listPets: {
    method: 'GET',
    path: '/pets',
    responses: {
      200: { body: 'Pets', headers: [...SECURE, ...VALIDATED] },
      304: NOT_MODIFIED,
      400: ERROR,
      401: UNAUTHENTICATED,
      403: ERROR,
      429: RETRY_LATER,
      500: ERROR,
      503: RETRY_LATER,
    },
  },
  createPet: {
    method: 'POST',
    path: '/pets',
    responses: {
      201: { body: 'Pet', headers: ['location', ...SECURE] },
      400: ERROR,
      401: UNAUTHENTICATED,
      403: ERROR,
      409: RETRY_LATER,
      413: ERROR,
      415: ERROR,
      422: ERROR,
      429: RETRY_LATER,
      500: ERROR,
      503: RETRY_LATER,
    },
  },
  getPet: {
    method: 'GET',
    path: '/pets/{petId}',
    responses: {
      200: { body: 'Pet', headers: [...DEPRECATED, ...VALIDATED] },
      304: { headers: ['deprecation', 'sunset', 'link', ...VALIDATED, ...SECURE] },
      400: ERROR,
      401: UNAUTHENTICATED,
      403: ERROR,
      404: { body: 'Error', headers: DEPRECATED },
      429: RETRY_LATER,
      500: ERROR,
      503: RETRY_LATER,
    },
  },
} as const satisfies Record<string, { method: string; path: string; responses: Record<number, Documented> }>;
export type OperationId = keyof typeof OPERATIONS;

/** The schemas of components/schemas that answers carry. */
interface Schemas {
  Pet: Pet;
  Pets: Pet[];
  Error: ErrorBody;
}

/** Response headers as supertest gives them, lower-cased; `H` are the ones present for certain. */
export type ResponseHeaders<H extends string = never> = Record<string, string> & Record<H, string>;

/** One answer: its status, headers, body as text and as JSON. */
export interface Answer<S extends number = number, B = unknown, H extends string = never> {
  status: S;
  headers: ResponseHeaders<H>;
  text: string;
  body: B;
}

/** An answer to a request the document has no operation for (any error is still an Error body). */
export type RestResponse = Answer;

type BodyAt<S extends number, Name extends keyof Schemas> = Name extends 'Error'
  ? Extract<ErrorBody, { status: S }>
  : Schemas[Name];
type DocumentedOf<O extends OperationId> = (typeof OPERATIONS)[O]['responses'];
type AnswerOf<O extends OperationId, S extends keyof DocumentedOf<O>> = S extends number
  ? DocumentedOf<O>[S] extends Documented
    ? Answer<
        S,
        DocumentedOf<O>[S] extends { body: infer Name extends keyof Schemas } ? BodyAt<S, Name> : unknown,
        DocumentedOf<O>[S]['headers'][number]
      >
    : never
  : never;

/** Every answer the document allows an operation: a union that `expectStatus` narrows to one. */
export type ResponseOf<O extends OperationId> = { [S in keyof DocumentedOf<O>]: AnswerOf<O, S> }[keyof DocumentedOf<O>];

export type ListPetsResponse = ResponseOf<'listPets'>;
export type CreatePetResponse = ResponseOf<'createPet'>;
export type GetPetResponse = ResponseOf<'getPet'>;
