import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CORS_ORIGIN_MAX_LENGTH, REST_BASE_PATH_MAX_LENGTH } from '../src/config.ts';
import { LIST_LIMIT, MAX_INT64_EXACT, PET_STATUSES } from '../src/pets/pet.ts';
import { AUTH, useTestServer } from './support/test-server.ts';

/**
 * The `maxLength` the document states for the headers built from the deployment's settings, met by
 * the longest values the service can really produce: the longest REST_BASE_PATH and CORS origin the
 * configuration takes, the largest id, and a next link from a real page with every parameter at its
 * longest spelling.
 */

const document = parse(readFileSync(new URL('../schema/openapi.yaml', import.meta.url), 'utf8'));
const maxLengthOf = (header: string): number => {
  const maxLength = document.components.headers[header]?.schema?.maxLength;
  expect(maxLength, `components/headers/${header} states a maxLength`).toBeTypeOf('number');
  return maxLength;
};

/** The longest base path the configuration takes, in segments as a deployment would write it. */
const LONGEST_BASE_PATH = `/${'a'.repeat(31)}/${'b'.repeat(REST_BASE_PATH_MAX_LENGTH - 33)}`;
/** The longest origin the configuration takes: a host as long as a DNS name with its trailing dot. */
const LONGEST_ORIGIN = `https://${['c', 'd', 'e'].map((letter) => letter.repeat(63)).join('.')}.${'f'.repeat(61)}.:65535`;
/** The longest spelling of a limit the service accepts: up to 20 digits, so leading zeros included. */
const LONGEST_LIMIT = String(LIST_LIMIT.max).padStart(20, '0');
/** The longest status value. */
const LONGEST_STATUS = [...PET_STATUSES].sort((a, b) => b.length - a.length)[0] as string;
/** A page of 100 and one pet after it, all with the largest ids there can be. */
const PETS = 101;

const server = useTestServer({ restBasePath: LONGEST_BASE_PATH, corsOrigins: LONGEST_ORIGIN });

/** Creates `count` pets whose ids end at the largest exact int64, as a store that got that far would. */
async function createPetsEndingAtTheLargestId(count: number): Promise<string[]> {
  await server.database.db
    .collection<{ _id: string; seq: number }>('counters')
    .updateOne({ _id: 'petId' }, { $set: { seq: MAX_INT64_EXACT - count } }, { upsert: true });
  const locations: string[] = [];
  for (let batch = 0; batch < count; batch += 10) {
    const created = await Promise.all(
      Array.from({ length: Math.min(10, count - batch) }, () =>
        server.request
          .post(`${LONGEST_BASE_PATH}/pets`)
          .set(AUTH)
          .send({ name: 'Long', categoryId: 1, status: LONGEST_STATUS }),
      ),
    );
    for (const response of created) {
      expect(response.status, response.text).toBe(201);
      locations.push(String(response.headers.location));
    }
  }
  return locations;
}

describe('headers at their longest, against the maxLength the document states', () => {
  let locations: string[] = [];
  beforeAll(async () => {
    locations = await createPetsEndingAtTheLargestId(PETS);
  });

  it('the settings are the longest the configuration takes', () => {
    expect(LONGEST_BASE_PATH).toHaveLength(REST_BASE_PATH_MAX_LENGTH);
    expect(LONGEST_ORIGIN).toHaveLength(CORS_ORIGIN_MAX_LENGTH);
    expect(server.restBasePath).toBe(LONGEST_BASE_PATH);
  });

  it('Location of the largest id, and the next link of a page of 100 filtered by status, reach their maxLength', async () => {
    const largest = `${LONGEST_BASE_PATH}/pets/${MAX_INT64_EXACT}`;
    expect(locations).toContain(largest);
    for (const location of locations) expect(location.length).toBeLessThanOrEqual(maxLengthOf('Location'));
    expect(largest).toHaveLength(maxLengthOf('Location'));

    const page = await server.request
      .get(`${LONGEST_BASE_PATH}/pets?limit=${LONGEST_LIMIT}&status=${LONGEST_STATUS}`)
      .set(AUTH);
    expect(page.status, page.text).toBe(200);
    expect(page.body).toHaveLength(100);
    const link = String(page.headers.link);
    expect(link).toMatch(
      new RegExp(`^<${LONGEST_BASE_PATH}/pets\\?limit=${LONGEST_LIMIT}&status=${LONGEST_STATUS}&cursor=`),
    );
    expect(link.length).toBeLessThanOrEqual(maxLengthOf('NextPageLink'));
    // The bound is the real maximum, not a guess above it.
    expect(link).toHaveLength(maxLengthOf('NextPageLink'));

    // The link leads on, to the last pet and no further link.
    const next = await server.request.get(/^<([^>]+)>/.exec(link)?.[1] ?? '').set(AUTH);
    expect(next.status, next.text).toBe(200);
    expect(next.body.map((pet: { id: number }) => pet.id)).toEqual([MAX_INT64_EXACT]);
    expect(next.headers.link).toBeUndefined();
  });

  it('a longer spelling of limit is refused, so no next link carries one', async () => {
    for (const limit of [`0${LONGEST_LIMIT}`, `-${LONGEST_LIMIT}`]) {
      const longer = await server.request.get(`${LONGEST_BASE_PATH}/pets?limit=${limit}`).set(AUTH);
      expect(longer.status, longer.text).toBe(400);
      expect(longer.headers.link).toBeUndefined();
    }
    const unknown = await server.request.get(`${LONGEST_BASE_PATH}/pets?status=availableish`).set(AUTH);
    expect(unknown.status, unknown.text).toBe(400);
  });

  it('the deprecated operation links, on a found pet and on a 404, reach their maxLength', async () => {
    for (const [id, status] of [
      [MAX_INT64_EXACT, 200],
      [1, 404],
    ]) {
      const response = await server.request.get(`${LONGEST_BASE_PATH}/pets/${id}`).set(AUTH);
      expect(response.status, response.text).toBe(status);
      expect(response.headers.link).toHaveLength(maxLengthOf('DeprecationLink'));
    }
  });

  it('Access-Control-Allow-Origin echoing the longest listed origin reaches its maxLength', async () => {
    const response = await server.request
      .get(`${LONGEST_BASE_PATH}/pets?limit=1`)
      .set({ ...AUTH, Origin: LONGEST_ORIGIN });
    expect(response.status, response.text).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe(LONGEST_ORIGIN);
    expect(response.headers['access-control-allow-origin']).toHaveLength(maxLengthOf('Access-Control-Allow-Origin'));
    // A preflight names the origin the same way.
    const preflight = await server.request
      .options(`${LONGEST_BASE_PATH}/pets`)
      .set({ Origin: LONGEST_ORIGIN, 'Access-Control-Request-Method': 'GET' });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toHaveLength(maxLengthOf('Access-Control-Allow-Origin'));
  });
});
