import { Kind } from 'graphql';
import { MAX_INT64_EXACT } from '../../pets/pet.ts';
import { builder } from '../builder.ts';

const RANGE = `an integer no larger in magnitude than ${MAX_INT64_EXACT}`;

function exactInteger(value: unknown): number {
  // Anything a JSON number cannot carry exactly is refused, never rounded.
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  throw new TypeError(`must be ${RANGE} (Int64, an exact JSON number)`);
}

export const Int64 = builder.scalarType('Int64', {
  description: `A 64-bit integer carried as a JSON number. Only integers with |n| <= 2^53-1 (${MAX_INT64_EXACT}) are exact in JSON, so only those are accepted; nothing is rounded.`,
  serialize: (value) => exactInteger(value),
  parseValue: (value) => exactInteger(value),
  parseLiteral: (ast) => {
    const big = ast.kind === Kind.INT ? BigInt(ast.value) : undefined;
    if (big === undefined || big > BigInt(MAX_INT64_EXACT) || big < -BigInt(MAX_INT64_EXACT)) {
      throw new TypeError(`Int64 must be ${RANGE}`);
    }
    return Number(big);
  },
});
