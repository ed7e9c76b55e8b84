import { createContextFactory, type FollowPets } from './context.ts';
import { createPublishedDocuments } from './documents/published-documents.ts';
import { useConditionalGets } from './graphql-http/conditional-gets.ts';
import { createGraphQLFastPath } from './graphql-http/fast-path.ts';
import { createGraphQLRequests } from './graphql-http/request.ts';
import { createDirectExecution, type DirectExecution } from './graphql/direct-execution.ts';
import { createErrorLog } from './graphql/error-log.ts';
import { directStepsOf, executionRules } from './graphql/execution-rules.ts';
import { createListSizeCheck } from './graphql/list-size.ts';
import type { OperationAdmission } from './graphql/operation-admission.ts';
import { schema } from './graphql/schema/index.ts';
import { createValidatedDocuments, type ValidatedDocuments } from './graphql/validated-documents.ts';
import type { GiveBack } from './http/conditional-get.ts';
import { createIdempotentCreates, schedulePurge } from './idempotency/idempotent-create.ts';
import { createPetUseCase } from './pets/create-pet.ts';
import { createRestExecutor } from './rest/executor.ts';
import type { ServiceDependencies } from './service.ts';
import { createExecuteSpans } from './telemetry/graphql-spans.ts';
import { createGraphQLServer } from './graphql-http/yoga.ts';

/** What both faces share: the context (with idempotent creates), the published documents, the rules. */
function createSharedExecution({ config, stores, logger, metrics }: ServiceDependencies, followPets: FollowPets) {
  const idempotentCreates = createIdempotentCreates({
    pets: stores.pets,
    records: stores.idempotencyRecords,
    retentionMs: config.IDEMPOTENCY_RETENTION_HOURS * 3_600_000,
    onReplay: metrics.countIdempotentReplay,
  });
  const documents = createPublishedDocuments({
    store: stores.persistedDocuments,
    logger,
    onDatabaseError: metrics.countDatabaseError,
    onOperationNames: metrics.publishOperationNames,
  });
  return {
    documents,
    stopPurging: schedulePurge(idempotentCreates, logger),
    createContext: createContextFactory(stores.pets, createPetUseCase(stores.pets, idempotentCreates), followPets),
    // One of each rule for both paths: Yoga's plugins and the direct execution call the same functions.
    errorLog: createErrorLog(logger),
    listSizeCheck: createListSizeCheck(config.MAX_GRAPHQL_LIST_ITEMS),
  };
}

type SharedExecution = ReturnType<typeof createSharedExecution>;

/** The fast path over the direct execution, running the documents Yoga has validated. */
function createFastPath(
  { config, metrics }: ServiceDependencies,
  { documents, giveBack }: SharedExecution & { giveBack: GiveBack | undefined },
  execution: DirectExecution,
  validatedDocuments: ValidatedDocuments,
) {
  return createGraphQLFastPath({
    execution,
    documents: validatedDocuments,
    metrics,
    trustedDocuments: config.TRUSTED_DOCUMENTS,
    ...(giveBack ? { giveBack } : {}),
    publishedText: (id) => {
      // A text not read yet (a promise) or an id not published (null): Yoga answers it.
      const text = documents.lookup(id);
      return typeof text === 'string' ? text : undefined;
    },
  });
}

/**
 * The two faces over one execution: GraphQL (Yoga, and the fast path for documents Yoga has
 * validated) and REST, both with the same context and rules (execution-rules.ts).
 */
export function createFaces(
  dependencies: ServiceDependencies,
  { admission, followPets, giveBack }: { admission: OperationAdmission; followPets: FollowPets; giveBack?: GiveBack },
) {
  const { config, logger, metrics, tracer } = dependencies;
  const shared = createSharedExecution(dependencies, followPets);
  const { documents, createContext, errorLog, listSizeCheck } = shared;
  // While tracing, every GraphQL request goes through Yoga: its parse and validate spans are part of the trace.
  const validatedDocuments = tracer ? undefined : createValidatedDocuments();
  const rules = executionRules({
    schema,
    logger,
    errorLog,
    listSizeCheck,
    admission,
    metrics,
    trustedDocuments: { mode: config.TRUSTED_DOCUMENTS, documents },
    conditionalGets: useConditionalGets(giveBack),
    tracer,
    validatedDocuments,
  });
  const yoga = createGraphQLServer({ createContext, logger, errorLog, rules });
  const executeSpans = tracer ? createExecuteSpans(tracer) : undefined;
  const direct = createDirectExecution({
    schema,
    createContext,
    steps: directStepsOf(rules),
    ...(executeSpans ? { executeSpans } : {}),
  });
  const fastPath =
    validatedDocuments && createFastPath(dependencies, { ...shared, giveBack }, direct, validatedDocuments);
  return {
    rest: createRestExecutor({
      execution: direct,
      basePath: config.REST_BASE_PATH,
      maxBodyBytes: config.MAX_BODY_BYTES,
      logger,
      metrics,
      ...(giveBack ? { giveBack } : {}),
    }),
    graphql: createGraphQLRequests(
      (req, res, context) => yoga.handle(req, res, context),
      config.MAX_GRAPHQL_BODY_BYTES,
      fastPath,
    ),
    /** Yoga's envelop and plugins (their params hooks: trusted documents, APQ), for operations over WebSocket. */
    envelop: { getEnveloped: yoga.getEnveloped, plugins: rules.flatMap((rule) => rule.yoga) },
    /** Settles once the published ids were read for the first time. */
    ready: documents.firstRead,
    close: async () => {
      shared.stopPurging();
      documents.stop();
      await yoga.dispose();
    },
  };
}
