#!/usr/bin/env bash
# The akgentic server in front of a Ray cluster over Postgres — see docs/scale-out.md.
#
#   docs/scale-out.sh postgres    # a throwaway Postgres (skip it: export AKGENTIC_STORAGE)
#   docs/scale-out.sh head        # the Ray head: no team runs on it
#   docs/scale-out.sh worker      # a Ray worker node: run it on each worker machine
#   docs/scale-out.sh serve       # akgentic serve --placement ray (foreground; Ctrl-C stops)
#   docs/scale-out.sh all         # postgres, head and one worker here, then serve
#   docs/scale-out.sh stop        # after Ctrl-C: this machine's Ray nodes, and the Postgres
#
# Settings (environment): AKGENTIC_STORAGE (a postgresql:// URL every machine reaches),
# RAY_HEAD (host:port of the head, default 127.0.0.1:6380), WORKER_CPUS (1),
# TEAMS_PER_WORKER (8), PORT (8080), CARDS (examples/teams), STATE (/tmp/akgentic-scale-out).
# Teams run in the Python of the worker nodes: install akgentic[ray] there, with the
# modules the team cards import and the models' API keys in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."

STATE=${STATE:-/tmp/akgentic-scale-out}
PG_PORT=${PG_PORT:-55444}
RAY_HEAD=${RAY_HEAD:-127.0.0.1:6380}
WORKER_CPUS=${WORKER_CPUS:-1}
TEAMS_PER_WORKER=${TEAMS_PER_WORKER:-8}
PORT=${PORT:-8080}
CARDS=${CARDS:-examples/teams}
BIN=${BIN:-$(dirname "$(command -v python3)")}
[ -x .venv/bin/ray ] && BIN=.venv/bin
mkdir -p "$STATE"

postgres() {
  if ! command -v initdb >/dev/null 2>&1; then   # Debian keeps them off PATH
    for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && PATH="$d:$PATH"; done
  fi
  local data="$STATE/pg"
  if [ ! -f "$data/PG_VERSION" ]; then
    mkdir -p "$data"
    if [ "$(id -u)" = 0 ]; then chown postgres "$data"; fi
    as_postgres "initdb -D $data -U akgentic --auth=trust >/dev/null"
  fi
  if ! as_postgres "pg_ctl -D $data status >/dev/null"; then   # not running yet
    as_postgres "pg_ctl -D $data -o '-p $PG_PORT -c listen_addresses=127.0.0.1 -k $data' \
      -l $data/log -w start >/dev/null"
  fi
  local said   # a database made by an earlier run is no failure; any other is
  if ! said=$(as_postgres "createdb -h 127.0.0.1 -p $PG_PORT -U akgentic akgentic" 2>&1); then
    case "$said" in *"already exists"*) ;; *) echo "$said" >&2; exit 1 ;; esac
  fi
  echo "export AKGENTIC_STORAGE=postgresql://akgentic@127.0.0.1:$PG_PORT/akgentic"
}

as_postgres() {   # initdb refuses to run as root
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "PATH=$PATH; $1"; else sh -c "$1"; fi
}

head_node() {
  "$BIN/ray" start --head --port="${RAY_HEAD##*:}" --num-cpus=0 --include-dashboard=false \
    --disable-usage-stats --temp-dir="$STATE/ray"
}

worker_node() {
  "$BIN/ray" start --address="$RAY_HEAD" --num-cpus="$WORKER_CPUS" \
    --resources='{"akgentic_worker": 1000}' --disable-usage-stats
}

serve() {
  : "${AKGENTIC_STORAGE:?export AKGENTIC_STORAGE=postgresql://... (docs/scale-out.sh postgres)}"
  exec "$BIN/akgentic" serve --port "$PORT" --cards "$CARDS" \
    --placement ray --ray-address "$RAY_HEAD" \
    --team-resource akgentic_worker=1 --max-teams-per-worker "$TEAMS_PER_WORKER"
}

stop() {
  "$BIN/ray" stop >/dev/null 2>&1 || true
  if [ -f "$STATE/pg/postmaster.pid" ]; then
    as_postgres "pg_ctl -D $STATE/pg -m fast -w stop >/dev/null"
  fi
  echo "stopped: Ray on this machine, and the Postgres in $STATE/pg (its data is kept)"
}

case "${1:-}" in
  postgres) postgres ;;
  stop) stop ;;
  head) head_node ;;
  worker) worker_node ;;
  serve) serve ;;
  all)
    eval "$(postgres | tail -1)"
    head_node
    worker_node
    serve
    ;;
  *) sed -n '2,15p' "$0"; exit 2 ;;
esac
