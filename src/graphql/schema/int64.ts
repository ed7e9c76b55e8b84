import { Kind } from 'graphql';
import { MAX_INT64_EXACT } from '../../pets/pet.ts';
import { builder } from '../builder.ts';

const RANGE = `an integer between -${MAX_INT64_EXACT} and ${MAX_INT64_EXACT}`;

function exactInteger(value: unknown): number {
  // Anything a JSON number cannot carry exactly is refused, never rounded.
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  throw new TypeError(`Int64 must be ${RANGE}`);
}

export const Int64 = builder.scalarType('Int64', {
  description: `A 64-bit integer carried as a JSON number; exact only as ${RANGE}, so only those values are accepted.`,
  serialize: (value) => exactInteger(value),
  parseValue: (value) => exactInteger(value),
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.INT) throw new TypeError(`Int64 must be ${RANGE}`);
    const big = BigInt(ast.value);
    if (big > BigInt(MAX_INT64_EXACT) || big < -BigInt(MAX_INT64_EXACT)) throw new TypeError(`Int64 must be ${RANGE}`);
    return Number(big);
  },
});
