import './int64.ts';
import './pet.ts';
import { builder } from '../builder.ts';

builder.queryType({});
builder.mutationType({});

export const schema = builder.toSchema();
