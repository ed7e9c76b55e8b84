/** Labels for names of operations not published: past this many labels in use, new names count as "other". */
export const MAX_OPERATION_NAMES = 200;
/** Longer names not published count as "other" too: a label is kept in memory and sent on every scrape. */
export const MAX_OPERATION_NAME_LENGTH = 64;

/** Labels the service itself gives: they never fall into "other". */
const OWN_LABELS = ['anonymous', 'invalid'];

/**
 * The operation-name label budget: the operation names of published documents (the operator's own,
 * as of the last read of them) always get their label, however the operation arrives (by its id, or
 * sent whole under TRUSTED_DOCUMENTS=log: the signal watched before enforcing); other names get theirs
 * first come first served while fewer than MAX_OPERATION_NAMES labels are in use (published names and
 * the service's own included), then count as "other", as do other names over MAX_OPERATION_NAME_LENGTH.
 * Published names are the operator's to choose, so they are not capped here.
 */
export function createOperationLabels() {
  let published: ReadonlySet<string> = new Set();
  const others = new Set(OWN_LABELS);
  return {
    label(name: string): string {
      if (published.has(name) || others.has(name)) return name;
      if (published.size + others.size >= MAX_OPERATION_NAMES || name.length > MAX_OPERATION_NAME_LENGTH) {
        return 'other';
      }
      others.add(name);
      return name;
    },
    /** The published documents' operation names, replacing those of the last read. */
    publish(names: ReadonlySet<string>): void {
      published = names;
      // A name first labelled as another's and published since frees its place in the budget.
      for (const name of names) if (!OWN_LABELS.includes(name)) others.delete(name);
    },
  };
}
