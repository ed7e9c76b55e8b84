import type { GraphQLInputField } from 'graphql';
import type { z } from 'zod';

/** Our own key in a GraphQL input field's `extensions` (graphql-js's public field metadata). */
const DOMAIN_RULE = 'domainRule';

/**
 * Pothos options for an input field that a domain rule checks. The zod plugin runs the rule before
 * the resolver; variable-errors.ts reads it from the field's extensions, so that the rule's problem is
 * reported beside the type problems of the other fields instead of only once they are all fixed.
 */
export const checkedBy = <Rule extends z.ZodType>(rule: Rule) => ({
  validate: { schema: rule },
  extensions: { [DOMAIN_RULE]: rule },
});

/**
 * A rule the walk of variables applies, but the zod plugin does not: for what Pothos checks on the
 * input type as a whole (an explicit null for a nullable field, say).
 */
export const alsoCheckedBy = (rule: z.ZodType) => ({ extensions: { [DOMAIN_RULE]: rule } });

/** The domain rule of an input field, if it has one. */
export const domainRuleOf = (field: GraphQLInputField): z.ZodType | undefined =>
  field.extensions[DOMAIN_RULE] as z.ZodType | undefined;
