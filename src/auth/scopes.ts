/**
 * What a key may do. `pets:read`: list and get pets, GraphQL queries; `pets:write`: create pets
 * (GraphQL mutations); `metrics:read`: `/metrics` on the service's port.
 */
export const SCOPES = ['pets:read', 'pets:write', 'metrics:read'] as const;
export type Scope = (typeof SCOPES)[number];
export type Scopes = ReadonlySet<Scope>;

/** A new key gets what a client needs, never what only an operator needs (least privilege). */
export const DEFAULT_SCOPES: readonly Scope[] = ['pets:read', 'pets:write'];

/**
 * API_KEYS keys, and issued keys stored before scopes existed: those could create pets and read
 * `/metrics`, so they keep every scope and nothing that worked stops working.
 */
export const EVERY_SCOPE: Scopes = new Set(SCOPES);

export const isScope = (value: unknown): value is Scope => (SCOPES as readonly unknown[]).includes(value);

/** The known scopes of a stored list, in SCOPES' order; an absent list is a key older than scopes. */
export function scopesOf(stored: unknown): Scope[] {
  if (stored === undefined) return [...SCOPES];
  if (!Array.isArray(stored)) return [];
  return SCOPES.filter((scope) => stored.includes(scope));
}

/** What a key without the scope reads, on both faces: the scope, and how an operator issues one with it. */
export const missingScopeMessage = (scope: Scope) =>
  `This API key does not have the scope ${scope}: ask for a key that has it (npm run keys -- create NAME --scope ${scope})`;
