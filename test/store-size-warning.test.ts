import { describe, expect, inject, it } from 'vitest';
import { connectDatabase } from '../src/db/mongo.ts';
import { EMBEDDED_PETS_LIMIT, warnWhenEmbeddedStoreIsLarge } from '../src/db/store-size-warning.ts';
import { capturingLogger } from './support/capturing-logger.ts';
import { uniqueDbName } from './support/test-server.ts';

describe('the embedded store size warning', () => {
  it('when the store holds more pets than the embedded database serves well, then the log says to move to MongoDB', {
    timeout: 60_000,
  }, async () => {
    const database = await connectDatabase(inject('mongoUri'), uniqueDbName('size'));
    const { logger, lines } = capturingLogger();
    try {
      const pets = database.db.collection<{ _id: number; name: string; categoryId: number }>('pets');
      const stop = warnWhenEmbeddedStoreIsLarge(database.db, logger);
      await new Promise((settled) => setTimeout(settled, 200));
      expect(lines).toEqual([]);
      stop();

      const docs = Array.from({ length: EMBEDDED_PETS_LIMIT + 1 }, (_, index) => ({
        _id: index + 1,
        name: 'x',
        categoryId: 1,
      }));
      await pets.insertMany(docs, { ordered: false });
      const stopAgain = warnWhenEmbeddedStoreIsLarge(database.db, logger);
      await expect.poll(() => lines.length, { timeout: 10_000 }).toBe(1);
      stopAgain();
      expect(lines[0]).toMatchObject({ pets: EMBEDDED_PETS_LIMIT + 1 });
      expect(lines[0]?.msg).toContain('set MONGODB_URI');
    } finally {
      await database.db.dropDatabase();
      await database.close();
    }
  });
});
