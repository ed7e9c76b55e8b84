import type { YogaInitialContext } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { ApiKeyVerifier } from './auth/api-keys.ts';
import { unauthenticated } from './graphql/errors.ts';
import type { PetRepository } from './pets/pet-repository.ts';

export interface Context extends YogaInitialContext {
  pets: PetRepository;
  /** Which API key made the request (a hash prefix, never the key). */
  keyId: string;
  logger: Logger;
}

export interface ContextDeps {
  pets: PetRepository;
  verifyApiKey: ApiKeyVerifier;
  logger: Logger;
}

/** Authentication lives here so GraphQL and REST share it: no context, no execution. */
export function createContextFactory({ pets, verifyApiKey, logger }: ContextDeps) {
  return ({ request }: YogaInitialContext): Omit<Context, keyof YogaInitialContext> => {
    const auth = verifyApiKey(request.headers.get('authorization'));
    if (!auth.ok) throw unauthenticated(auth.keyWasSent);
    return { pets, keyId: auth.keyId, logger: logger.child({ keyId: auth.keyId }) };
  };
}
