#!/usr/bin/env bash
# Contract fuzzing: starts the real service (embedded FerretDB, fresh data dir) and runs schemathesis
# against OUR document, schema/openapi.yaml, with every check, positive and negative data, and the
# stateful phase (POST /pets -> GET /pets/{petId} through the document's `links`; see below for why
# that phase runs on the document without the optional Idempotency-Key header). Deprecated
# operations are tested too. Exits non-zero on any failure; always stops the service.
#
# Environment (all optional):
#   FUZZ_MAX_EXAMPLES  examples per operation and phase (default 500: about 3 minutes on 2 cores)
#   FUZZ_SEED          hypothesis seed (default 42)
#   FUZZ_PORT          port for the service (default: one the service picks)
#   FUZZ_VENV          the schemathesis virtualenv (default: a cache dir, created when missing)
#   FUZZ_EXTRA_ARGS    extra arguments for `st run` (e.g. "--include-operation-id getPet")
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-500}"
SEED="${FUZZ_SEED:-42}"
VENV="${FUZZ_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/petstore-gateway/venv}"
REQUIREMENTS="$ROOT/.ci/requirements-fuzz.txt"
ARTIFACTS="$ROOT/test-artifacts/schemathesis"
# Above test/support/service-process.ts's own start deadline (180 s: a first start compiles FerretDB).
START_TIMEOUT=200

log() { printf '[fuzz] %s\n' "$*"; }

retry() {
  if "$@"; then return 0; fi
  log "failed, retrying once in 5 s: $*"
  sleep 5
  "$@"
}

# --- schemathesis, pinned, in a reusable venv (rebuilt when the requirements change) --------------------
wanted="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
if [[ ! -x "$VENV/bin/st" ]] || [[ "$(cat "$VENV/.requirements.sha256" 2>/dev/null || true)" != "$wanted" ]]; then
  log "creating the schemathesis venv in $VENV from .ci/requirements-fuzz.txt"
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
  retry "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQUIREMENTS"
  echo "$wanted" >"$VENV/.requirements.sha256"
fi
"$VENV/bin/st" --version

# --- the service -------------------------------------------------------------------------------------
KEY="$("$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(16))')" # 32 characters
DATA_DIR="$(mktemp -d "${TMPDIR:-/tmp}/petstore-fuzz-data.XXXXXX")"
SERVICE_LOG="$(mktemp "${TMPDIR:-/tmp}/petstore-fuzz-service.XXXXXX.log")"
ORIGIN_FILE="$(mktemp "${TMPDIR:-/tmp}/petstore-fuzz-origin.XXXXXX")"
rm -rf "$ARTIFACTS"
mkdir -p "$ARTIFACTS"

SERVICE_PID=""
stop_service() {
  local status=$?
  if [[ -n "$SERVICE_PID" ]] && kill -0 "$SERVICE_PID" 2>/dev/null; then
    # scripts/serve.ts stops the service it started (SIGTERM, drained; SIGKILL after 15 s) and exits
    # with its code; anything still in its process group (setsid) after that is killed.
    kill -TERM "$SERVICE_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$SERVICE_PID" 2>/dev/null || break
      sleep 0.2
    done
    local code=0
    wait "$SERVICE_PID" 2>/dev/null || code=$?
    log "service stopped (exit code $code)"
    # A service that does not drain cleanly after the run is a failure too.
    if [[ "$status" -eq 0 && "$code" -ne 0 ]]; then status=1; fi
  fi
  [[ -n "$SERVICE_PID" ]] && kill -KILL -- "-$SERVICE_PID" 2>/dev/null || true
  cp "$SERVICE_LOG" "$ARTIFACTS/service.log" 2>/dev/null || true
  rm -rf "$DATA_DIR" "$SERVICE_LOG" "$ORIGIN_FILE"
  exit "$status"
}
trap stop_service EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "starting the service through scripts/serve.ts (npm start; data dir $DATA_DIR)"
# schemathesis sends thousands of requests, many without a valid key on purpose: rate limits far above
# what it sends, so that every answer is the operation's own (the 429 path has tests of its own).
# LOG_LEVEL info: the helper finds the service by its "is listening" line (and the access log helps
# to read a failure).
PORT="${FUZZ_PORT:-0}" HOST=127.0.0.1 API_KEYS="$KEY" LOG_LEVEL=info DATA_DIR="$DATA_DIR" NODE_ENV=production \
  EMBEDDED_DATABASE_IN_PRODUCTION=allow \
  RATE_LIMIT_PER_KEY=100000 RATE_LIMIT_BURST=100000 AUTH_FAILURE_LIMIT=100000 AUTH_FAILURE_BURST=100000 \
  setsid node --import tsx scripts/serve.ts >"$ORIGIN_FILE" 2>"$SERVICE_LOG" </dev/null &
SERVICE_PID=$!

started=$SECONDS
until [[ -s "$ORIGIN_FILE" ]]; do
  if ! kill -0 "$SERVICE_PID" 2>/dev/null; then
    log "the service exited before it listened; its log:"
    tail -n 60 "$SERVICE_LOG"
    exit 1
  fi
  if (( SECONDS - started >= START_TIMEOUT )); then
    log "the service was not listening after ${START_TIMEOUT} s; its log:"
    tail -n 60 "$SERVICE_LOG"
    exit 1
  fi
  sleep 0.2
done
read -r ORIGIN <"$ORIGIN_FILE"
if [[ "$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$ORIGIN/health" || true)" != 200 ]]; then
  log "the service at $ORIGIN is listening but not healthy"
  exit 1
fi
log "service healthy at $ORIGIN after $((SECONDS - started)) s"

# --- schemathesis ------------------------------------------------------------------------------------
# Two runs on one service. The stateful phase (POST /pets -> GET /pets/{petId} through the links) runs
# on the document without the optional Idempotency-Key parameter: with it, hypothesis replays its
# generated sequences against keys an earlier sequence already used, gets other answers (a replay, a
# 422) and ends the phase after about 90 scenarios instead of about 630 (measured). The other phases
# test the header on the document as it is.
STATEFUL_DOCUMENT="$ARTIFACTS/openapi-stateful.json"
node --input-type=module -e "
  import { readFileSync, writeFileSync } from 'node:fs';
  import { parse } from 'yaml';
  const document = parse(readFileSync('schema/openapi.yaml', 'utf8'));
  delete document.paths['/pets'].post.parameters;
  writeFileSync(process.argv[1], JSON.stringify(document));
" "$STATEFUL_DOCUMENT"

COMMON_ARGS=(
  --url "$ORIGIN/v1"
  -H "Authorization: Bearer $KEY"
  --checks all
  --mode all
  --max-examples "$MAX_EXAMPLES"
  --seed "$SEED"
  --workers 1
  --generation-database none
  --request-timeout 10
  --report junit,ndjson
  --report-dir "$ARTIFACTS"
  --no-color
)
# shellcheck disable=SC2206 # word splitting of the extra arguments is intended
[[ -n "${FUZZ_EXTRA_ARGS:-}" ]] && COMMON_ARGS+=(${FUZZ_EXTRA_ARGS})

ST_OUT="$ARTIFACTS/output.txt"
: >"$ST_OUT"
st_status=0
run_st() {
  local document="$1" phases="$2"
  local args=(--config-file .ci/schemathesis.toml run "$document" --phases "$phases" "${COMMON_ARGS[@]}")
  log "st ${args[*]//$KEY/***}"
  set +e
  # The key is a throwaway for this run; schemathesis masks Authorization in its output anyway.
  "$VENV/bin/st" "${args[@]}" 2>&1 | tee -a "$ST_OUT"
  local status=${PIPESTATUS[0]}
  set -e
  if [[ "$status" -ne 0 ]]; then st_status=$status; fi
}
run_st schema/openapi.yaml examples,coverage,fuzzing
run_st "$STATEFUL_DOCUMENT" stateful
# A pattern schemathesis cannot compile is dropped with a warning, and the fuzzing then sends values
# the contract refuses: the document must say what it means in every engine (docs/development.md).
if grep -q 'Unsupported regex patterns' "$ST_OUT"; then
  log "schemathesis dropped a pattern of the document: see its warning above"
  st_status=1
fi

# A summary a person can find at the end of a long log.
log "summary (schemathesis exit code $st_status):"
grep -E '^ *❌|^(API Operations:|Test Phases:|Test cases:|Failures:|Errors:|Warnings:|Seed:)|^ +(Selected|Tested|Skipped|Errored|[0-9]+ (generated|passed|failed|skipped))|^ +[^ ]+ +(Examples|Coverage|Fuzzing|Stateful)( |$)|^=+ .* =+$' "$ST_OUT" || true
# Checks and requests, counted from the NDJSON event stream (schemathesis' own summary has no such totals).
"$VENV/bin/python" - "$ARTIFACTS" <<'EOF' || true
import collections, glob, json, sys

files = sorted(glob.glob(f"{sys.argv[1]}/ndjson-*.ndjson"))
if not files:
    sys.exit(0)
lines = [line for path in files for line in open(path, encoding="utf-8")]
checks, failed, statuses, operations, cases = collections.Counter(), collections.Counter(), collections.Counter(), set(), set()
for line in lines:
    event = json.loads(line).get("ScenarioFinished")
    if not event:
        continue
    recorder = event.get("recorder") or {}
    if event.get("phase") != "stateful" and recorder.get("label"):
        operations.add(recorder["label"])
    cases.update((recorder.get("cases") or {}).keys())
    for results in (recorder.get("checks") or {}).values():
        for result in results:
            checks[result["name"]] += 1
            if result.get("status") != "success":
                failed[result["name"]] += 1
    for interaction in (recorder.get("interactions") or {}).values():
        response = interaction.get("response") or {}
        statuses[response.get("status_code", "none")] += 1
print(
    f"[fuzz] totals: {len(operations)} operations ({', '.join(sorted(operations))}), {len(checks)} distinct checks, {sum(checks.values())} check runs "
    f"({sum(failed.values())} failed), {len(cases)} cases, {sum(statuses.values())} requests"
)
print("[fuzz] responses by status: " + ", ".join(f"{code}: {n}" for code, n in sorted(statuses.items(), key=lambda kv: str(kv[0]))))
print("[fuzz] check runs: " + ", ".join(f"{name} {n}" + (f" ({failed[name]} failed)" if failed[name] else "") for name, n in sorted(checks.items())))
EOF
if [[ "$st_status" -ne 0 ]]; then
  log "schemathesis found failures; the service log is in $ARTIFACTS/service.log"
  tail -n 40 "$SERVICE_LOG" || true
fi
exit "$st_status"
