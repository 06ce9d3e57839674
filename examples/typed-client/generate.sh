#!/usr/bin/env bash
# Regenerates examples/typed-client/schema.d.ts from the OpenAPI description the service serves.
#
# Builds the service, starts it on a free local port with a throw-away SQLite database, fetches
# /api/openapi.json and runs openapi-typescript on it. test/examples/typed-client.test.ts fails
# whenever the committed schema.d.ts differs from what this script would write.
#
# Usage: examples/typed-client/generate.sh        (from anywhere; needs node, npm and curl)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$REPO/examples/typed-client/schema.d.ts"
WORK="$(mktemp -d)"
SERVER_PID=""

cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

cd "$REPO"
echo "building the service…"
npm run build --silent

PORT="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"

# Only the variables below configure the service; none of the caller's INVOICING_* settings leak in.
env -u INVOICING_BOOTSTRAP_FILE -u INVOICING_PUBLIC_URL -u INVOICING_SHARE_URL -u INVOICING_PORTAL_URL \
  -u INVOICING_DEMO_TOKEN -u INVOICING_DEMO_PUBLIC_ID -u REDIS_URL -u SMTP_URL \
  DATABASE_URL="sqlite:$WORK/openapi.sqlite" HOST=127.0.0.1 PORT="$PORT" LOG_LEVEL=warn \
  node dist/src/server.js >"$WORK/server.log" 2>&1 &
SERVER_PID=$!

for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "the service exited before it was ready:" >&2
    cat "$WORK/server.log" >&2
    exit 1
  fi
  sleep 0.2
done

curl -fsS "http://127.0.0.1:$PORT/api/openapi.json" -o "$WORK/openapi.json"

# Run from the work directory so the generator uses its own default checks (valid OpenAPI, unique
# operationIds), not the repository's redocly.yaml lint rules: style findings are the job of
# test/http/openapi.test.ts and do not change the generated types.
(cd "$WORK" && npx --no-install --prefix "$REPO" openapi-typescript "$WORK/openapi.json" -o "$OUT")
echo "wrote ${OUT#"$REPO"/}"
