import type { StandardSchemaV1 } from '@pothos/plugin-validation';
import type { GraphQLInputField, GraphQLInputObjectType } from 'graphql';
import type { z } from 'zod';

/** Our own keys in GraphQL `extensions` (graphql-js's public metadata of types and fields). */
const DOMAIN_RULE = 'domainRule';
const NULL_REFUSED = 'nullRefused';

/** Pothos options for a field a domain rule checks; variable-errors.ts reports the rule with type problems. */
export const checkedBy = <Rule extends z.ZodType>(rule: Rule) => ({
  validate: rule,
  extensions: { [DOMAIN_RULE]: rule },
});

/**
 * Pothos options for an input type whose nullable fields refuse an explicit null, with the reasons: the
 * validation plugin skips a null field's own rule, so the check runs on the whole input.
 */
export function refusingNull(reasons: Readonly<Record<string, string>>) {
  const validate: StandardSchemaV1<Record<string, unknown>> = {
    '~standard': {
      version: 1,
      vendor: 'petstore-gateway',
      validate: (input) => {
        const fields = input as Record<string, unknown>;
        const issues = Object.entries(reasons)
          .filter(([field]) => fields[field] === null)
          .map(([field, message]) => ({ message, path: [field] }));
        return issues.length > 0 ? { issues } : { value: fields };
      },
    },
  };
  return { validate, extensions: { [NULL_REFUSED]: reasons } };
}

/** The domain rule of an input field, if it has one. */
export const domainRuleOf = (field: GraphQLInputField): z.ZodType | undefined =>
  field.extensions[DOMAIN_RULE] as z.ZodType | undefined;

/** Why an explicit null is refused for this field of this input type, if it is. */
export function nullReasonOf(type: GraphQLInputObjectType, field: GraphQLInputField): string | undefined {
  const reasons = type.extensions[NULL_REFUSED] as Readonly<Record<string, string>> | undefined;
  return reasons && Object.hasOwn(reasons, field.name) ? reasons[field.name] : undefined;
}
