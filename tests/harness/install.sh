#!/usr/bin/env bash
# Install every agent harness the harness tests run (CI calls this before pytest), each pinned:
# the Deep Agents environment from PyPI and the Codex CLI from npm (npm ci of its lock). Pi is not
# installed: it has no MCP client to be given the run's tools (docs/infoorgbench-runs.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bash "$root/harness/deepagents/install.sh"
bash "$root/harness/codex/install.sh"
