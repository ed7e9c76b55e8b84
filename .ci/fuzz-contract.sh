#!/usr/bin/env bash
# Contract fuzzing: starts the real service (embedded FerretDB, fresh data dir) and runs schemathesis
# against OUR document, schema/openapi.yaml, with every check, positive and negative data, and the
# stateful phase (POST /pets -> GET /pets/{petId} through the document's `links`). Deprecated
# operations are tested too. Exits non-zero on any failure; always stops the service.
#
# Environment (all optional):
#   FUZZ_MAX_EXAMPLES  examples per operation and phase (default 100)
#   FUZZ_SEED          hypothesis seed (default 42)
#   FUZZ_PORT          port for the service (default: a free one)
#   FUZZ_VENV          the schemathesis virtualenv (default: a cache dir, created when missing)
#   FUZZ_EXTRA_ARGS    extra arguments for `st run` (e.g. "--include-operation-id getPet")
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-100}"
SEED="${FUZZ_SEED:-42}"
VENV="${FUZZ_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/petstore-gateway/venv}"
REQUIREMENTS="$ROOT/.ci/requirements-fuzz.txt"
ARTIFACTS="$ROOT/test-artifacts/schemathesis"
HEALTH_TIMEOUT=180

log() { printf '[fuzz] %s\n' "$*"; }

retry() {
  if "$@"; then return 0; fi
  log "failed, retrying once in 5 s: $*"
  sleep 5
  "$@"
}

# --- schemathesis, pinned, in a reusable venv --------------------------------------------------------
pinned="$(grep -E '^schemathesis==' "$REQUIREMENTS" | head -n1 | cut -d= -f3)"
if [[ ! -x "$VENV/bin/st" ]] || [[ "$("$VENV/bin/st" --version 2>/dev/null | awk '{print $NF}')" != "$pinned" ]]; then
  log "creating the schemathesis venv in $VENV (schemathesis $pinned)"
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
  retry "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQUIREMENTS"
fi
"$VENV/bin/st" --version

# --- the service -------------------------------------------------------------------------------------
if [[ -n "${FUZZ_PORT:-}" ]]; then
  PORT="$FUZZ_PORT"
else
  PORT="$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
fi
KEY="$("$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(16))')" # 32 characters
DATA_DIR="$(mktemp -d "${TMPDIR:-/tmp}/petstore-fuzz-data.XXXXXX")"
SERVICE_LOG="$(mktemp "${TMPDIR:-/tmp}/petstore-fuzz-service.XXXXXX.log")"
mkdir -p "$ARTIFACTS"

SERVICE_PID=""
stop_service() {
  local status=$?
  if [[ -n "$SERVICE_PID" ]] && kill -0 "$SERVICE_PID" 2>/dev/null; then
    # The service runs in its own process group (setsid): npx -> tsx -> node -> FerretDB.
    kill -TERM -- "-$SERVICE_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 -- "-$SERVICE_PID" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL -- "-$SERVICE_PID" 2>/dev/null || true
    wait "$SERVICE_PID" 2>/dev/null || true
  fi
  cp "$SERVICE_LOG" "$ARTIFACTS/service.log" 2>/dev/null || true
  rm -rf "$DATA_DIR" "$SERVICE_LOG"
  exit "$status"
}
trap stop_service EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "starting the service on 127.0.0.1:$PORT (data dir $DATA_DIR)"
PORT="$PORT" HOST=127.0.0.1 API_KEYS="$KEY" LOG_LEVEL=warn DATA_DIR="$DATA_DIR" NODE_ENV=production \
  setsid npx --no-install tsx src/main.ts >"$SERVICE_LOG" 2>&1 </dev/null &
SERVICE_PID=$!

started=$SECONDS
until [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health" || true)" == 200 ]]; do
  if ! kill -0 "$SERVICE_PID" 2>/dev/null; then
    log "the service exited before it was healthy; its log:"
    cat "$SERVICE_LOG"
    exit 1
  fi
  if (( SECONDS - started >= HEALTH_TIMEOUT )); then
    log "the service was not healthy after ${HEALTH_TIMEOUT} s; its log:"
    cat "$SERVICE_LOG"
    exit 1
  fi
  sleep 1
done
log "service healthy after $((SECONDS - started)) s"

# --- schemathesis ------------------------------------------------------------------------------------
ST_ARGS=(
  run schema/openapi.yaml
  --url "http://127.0.0.1:$PORT/v1"
  -H "Authorization: Bearer $KEY"
  --checks all
  --mode all
  --phases examples,coverage,fuzzing,stateful
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
[[ -n "${FUZZ_EXTRA_ARGS:-}" ]] && ST_ARGS+=(${FUZZ_EXTRA_ARGS})

log "st ${ST_ARGS[*]//$KEY/***}"
ST_OUT="$ARTIFACTS/output.txt"
set +e
# The key is a throwaway for this run; schemathesis masks Authorization in its output anyway.
"$VENV/bin/st" "${ST_ARGS[@]}" 2>&1 | tee "$ST_OUT"
st_status=${PIPESTATUS[0]}
set -e

# A summary a person can find at the end of a long log.
log "summary (schemathesis exit code $st_status):"
grep -E '^(API Operations:|Test Phases:|Test cases:|Failures:|Errors:|Warnings:|Seed:)|^ +(Selected|Tested|Skipped|Errored|Examples|Coverage|Fuzzing|Stateful|[0-9]+ (generated|passed|failed|skipped))|^=+ .* =+$' "$ST_OUT" || true
if [[ "$st_status" -ne 0 ]]; then
  log "schemathesis found failures; the service log is in $ARTIFACTS/service.log"
  tail -n 40 "$SERVICE_LOG" || true
fi
exit "$st_status"
