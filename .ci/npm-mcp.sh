#!/usr/bin/env bash
# Installs the npm MCP servers that the MCP gateway's end-to-end tests run
# against (internal/mcpgw/e2e_test.go), at the versions pinned in
# .ci/npm-mcp/package-lock.json, into a cache directory, and exports
#
#   MANDATE_TEST_MCP_DIR   the directory whose node_modules holds them
#
# Source it before `go test` (`. .ci/npm-mcp.sh`), or run it to print the
# export line. The cache is reused while the lock file is unchanged. Needs
# node and npm; set MANDATE_MCP_CACHE to choose the directory.
_mandate_npm_mcp() {
	local here dir stamp
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/npm-mcp
	dir=${MANDATE_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mandate/npm-mcp}
	command -v npm >/dev/null || { echo "npm-mcp: npm is not installed" >&2; return 1; }
	mkdir -p "$dir" || return 1
	stamp="$dir/.installed-lock"
	if ! cmp -s "$here/package-lock.json" "$stamp" || [ ! -d "$dir/node_modules/@modelcontextprotocol/server-filesystem" ] || [ ! -d "$dir/node_modules/@modelcontextprotocol/server-everything" ]; then
		cp "$here/package.json" "$here/package-lock.json" "$dir/" || return 1
		(cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) || { echo "npm-mcp: npm ci failed" >&2; return 1; }
		cp "$here/package-lock.json" "$stamp" || return 1
	fi
	export MANDATE_TEST_MCP_DIR="$dir"
}
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	_mandate_npm_mcp
	printf 'export MANDATE_TEST_MCP_DIR=%q\n' "$MANDATE_TEST_MCP_DIR"
else
	_mandate_npm_mcp
fi
