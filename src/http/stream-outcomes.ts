// The words for how a stream (a GraphQL subscription) fared: the access log writes them, metrics
// count by them, the open streams decide them. Imports nothing, so every layer above may use them.

/** Why a key's open streams are ended by the instance: it was revoked (or deleted), or it reached its expiry. */
export type KeyGone = 'revoked' | 'expired';

/** Why a stream ended: the client left, the instance shut down, the source failed, or its key is gone. */
export type StreamEnd = 'client' | 'shutdown' | 'error' | KeyGone;

/** Why a stream was refused before its first event: the key's streams, the instance's, or a stopping instance. */
export type StreamRefusal = 'per_key' | 'instance' | 'shutdown';
