import './int64.ts';
import './pet.ts';
import './pet-events.ts';
import { builder } from '../builder.ts';

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});

// Fields in the order declared (Pothos sorts them by default): errors name input fields in that order,
// the contract's. schema/schema.graphql is printed sorted all the same.
export const schema = builder.toSchema({ sortSchema: false });
