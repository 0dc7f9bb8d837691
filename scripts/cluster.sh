#!/usr/bin/env bash
# Several `serve` processes behind nginx on one PostgreSQL, limits shared through Redis (README, "Running several servers").
#
#   scripts/cluster.sh            # Ctrl-C (or SIGTERM) stops everything it started
#
# Starts, all on 127.0.0.1, in one directory (CLUSTER_DIR, default a new temp dir):
#   - redis-server (rate limits and quotas shared by the replicas: --redis-url),
#   - PostgreSQL 15 (the directory, one database for every replica: --database), unless
#     CLUSTER_DATABASE_URL names a database that already runs, or CLUSTER_STORE=sqlite,
#   - one `serve` process per port of CLUSTER_SERVE_PORTS, all on one data dir,
#   - nginx in front of them: round robin, the next replica when one refuses or drops
#     a connection, X-Forwarded-For set; the replicas trust exactly that one hop.
# Each writes its log and pid there: redis.log/.pid, postgres.log/.pid, serve-N.log/.pid,
# nginx/{error,access}.log and nginx.pid.
# Once everything answers it prints "cluster: ready" and writes cluster.env (the URLs and pids).
#
# Environment (all optional):
#   CLUSTER_DIR           where the logs, pids, nginx config and (by default) the data dir go
#   CLUSTER_PORT          nginx, the one address clients use (default 8080)
#   CLUSTER_SERVE_PORTS   the replicas, one per port (default "8781 8782")
#   CLUSTER_REDIS_PORT    redis-server (default 6390); or CLUSTER_REDIS_URL to use a Redis that already runs
#   CLUSTER_DATA_DIR      the replicas' data dir (default $CLUSTER_DIR/data)
#   CLUSTER_DATABASE_URL  every replica's --database: a PostgreSQL that already runs
#                         (postgres://user:password@host:5432/agentdir) or sqlite:<path>; then none is started
#   CLUSTER_STORE         without CLUSTER_DATABASE_URL: postgres (default: one PostgreSQL 15 started here,
#                         database agentdir) or sqlite (every replica opens the data dir's SQLite file: one machine)
#   CLUSTER_POSTGRES_PORT the PostgreSQL started here (default 6432)
#   CLUSTER_POSTGRES_OPTIONS  more server settings for it, e.g. "-c shared_buffers=512MB"
#   CLUSTER_POSTGRES_BIN  its programs (default /usr/lib/postgresql/15/bin: Debian's package postgresql)
#   CLUSTER_SERVE_ARGS    more `serve` flags for every replica, e.g. "--no-demo-data --allow-private-urls"
#   CLUSTER_SERVE_FROM    build (default: out/api/serve.js, built first when missing or older than the
#                         sources, as `npm run serve` does) or sources (src-api through tsx, as the tests run it)
#   CLUSTER_START_TIMEOUT seconds to wait for each part to answer (default 120)
#   AGENTDIR_*            the usual environment of `serve` reaches every replica as it is
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PORT="${CLUSTER_PORT:-8080}"
read -r -a SERVE_PORTS <<<"${CLUSTER_SERVE_PORTS:-8781 8782}"
REDIS_PORT="${CLUSTER_REDIS_PORT:-6390}"
STORE="${CLUSTER_STORE:-postgres}"
PG_PORT="${CLUSTER_POSTGRES_PORT:-6432}"
PG_BIN="${CLUSTER_POSTGRES_BIN:-/usr/lib/postgresql/15/bin}"
START_TIMEOUT="${CLUSTER_START_TIMEOUT:-120}"
read -r -a SERVE_ARGS <<<"${CLUSTER_SERVE_ARGS:-}"

DIR="${CLUSTER_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/agentdir-cluster-XXXXXX")}"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
DATA_DIR="${CLUSTER_DATA_DIR:-$DIR/data}"
mkdir -p "$DATA_DIR"

say() { echo "cluster: $*"; }
fail() {
  echo "cluster: $*" >&2
  exit 1
}

[ "${#SERVE_PORTS[@]}" -ge 1 ] || fail "CLUSTER_SERVE_PORTS names no port"
command -v nginx >/dev/null || fail "nginx is not installed (apt-get install -y --no-install-recommends nginx)"
if [ -z "${CLUSTER_REDIS_URL:-}" ]; then
  command -v redis-server >/dev/null || fail "redis-server is not installed (apt-get install -y --no-install-recommends redis-server), or give CLUSTER_REDIS_URL"
fi

case "$STORE" in
  postgres | sqlite) ;;
  *) fail "CLUSTER_STORE must be postgres or sqlite, got \"$STORE\"" ;;
esac
if [ -z "${CLUSTER_DATABASE_URL:-}" ] && [ "$STORE" = postgres ]; then
  [ -x "$PG_BIN/postgres" ] || fail "PostgreSQL 15 is not installed ($PG_BIN: apt-get install -y --no-install-recommends postgresql), or give CLUSTER_DATABASE_URL, or CLUSTER_STORE=sqlite"
fi

SERVE_FROM="${CLUSTER_SERVE_FROM:-build}"
case "$SERVE_FROM" in
  build) SERVE_CMD=(node out/api/serve.js) ;;
  sources) SERVE_CMD=(node --import tsx src-api/serve.ts) ;;
  *) fail "CLUSTER_SERVE_FROM must be build or sources, got \"$SERVE_FROM\"" ;;
esac

# ---------------------------------------------------------------------------
# Stopping: whatever was started, on Ctrl-C, SIGTERM or any exit: nginx first (no new requests), then
# the replicas (they finish what they are doing), then PostgreSQL and Redis (which the replicas use until they stop).
# Each part runs in its own session (setsid), so a terminal's Ctrl-C reaches this script only and the
# parts stop in that order instead of all at once.
REDIS_PID=""
PG_PID=""
SERVE_PIDS=()
NGINX_PID=""
stopping=0
# SIGTERM to every pid given, then waits for them: up to 20 s, then SIGKILL.
stop_pids() {
  local pid
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  local deadline=$((SECONDS + 20))
  for pid in "$@"; do
    while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
stop_all() {
  [ "$stopping" = 1 ] && return
  stopping=1
  trap - INT TERM
  say "stopping"
  if [ -n "$NGINX_PID" ]; then stop_pids "$NGINX_PID"; fi
  if [ "${#SERVE_PIDS[@]}" -gt 0 ]; then stop_pids "${SERVE_PIDS[@]}"; fi
  if [ -n "$PG_PID" ]; then stop_pids "$PG_PID"; fi
  if [ -n "$REDIS_PID" ]; then stop_pids "$REDIS_PID"; fi
  say "stopped; logs in $DIR"
}
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM
trap 'stop_all' EXIT

# Polls `check` (a command) every 0.2 s until it succeeds, while `pid` lives, for up to START_TIMEOUT seconds.
wait_until() {
  local what="$1" pid="$2" log="$3"
  shift 3
  local deadline=$((SECONDS + START_TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "cluster: $what exited before it was ready; its log ($log):" >&2
      tail -n 30 "$log" >&2 || true
      exit 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "cluster: $what was not ready within ${START_TIMEOUT} s; its log ($log):" >&2
      tail -n 30 "$log" >&2 || true
      exit 1
    fi
    sleep 0.2
  done
}

# ---------------------------------------------------------------------------
# Redis: the rate-limit counters and quotas of every replica (no persistence: they are counters of a minute).
if [ -n "${CLUSTER_REDIS_URL:-}" ]; then
  REDIS_URL="$CLUSTER_REDIS_URL"
  say "redis: using $REDIS_URL"
else
  mkdir -p "$DIR/redis"
  setsid redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$DIR/redis" --save '' --appendonly no \
    --protected-mode yes --daemonize no >"$DIR/redis.log" 2>&1 &
  REDIS_PID=$!
  echo "$REDIS_PID" >"$DIR/redis.pid"
  wait_until redis-server "$REDIS_PID" "$DIR/redis.log" redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping
  REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
  say "redis: $REDIS_URL (pid $REDIS_PID)"
fi

# ---------------------------------------------------------------------------
# The database: one for every replica (each follows the others' writes through the change cursor;
# webhook deliveries and mails are leased in it, so each is sent once).
# - CLUSTER_DATABASE_URL: a database that already runs (on another machine, say), used as it is.
# - CLUSTER_STORE=postgres (the default): a PostgreSQL 15 started here in its own cluster under
#   DIR/postgres (initdb; local connections only, trusted: only this machine reaches 127.0.0.1), and
#   in it the database agentdir, with an ICU collation as most installations have. The replicas
#   migrate it when they start.
# - CLUSTER_STORE=sqlite: every replica opens the SQLite file in DATA_DIR (WAL): one machine only.
DATABASE_ARGS=()
DATABASE_URL=""
if [ -n "${CLUSTER_DATABASE_URL:-}" ]; then
  DATABASE_URL="$CLUSTER_DATABASE_URL"
  say "database: CLUSTER_DATABASE_URL"
elif [ "$STORE" = postgres ]; then
  PG_DIR="$DIR/postgres"
  mkdir -p "$PG_DIR"
  AS_PG=()
  if [ "$(id -u)" = 0 ]; then
    # PostgreSQL refuses to run as root: as the postgres user (Debian's package makes it), which must reach PG_DIR.
    id -u postgres >/dev/null 2>&1 || fail "PostgreSQL refuses to run as root and there is no postgres user"
    chmod 0711 "$DIR"
    chown postgres: "$PG_DIR"
    runuser -u postgres -- test -w "$PG_DIR" || fail "the postgres user cannot write $PG_DIR (give a CLUSTER_DIR it can reach)"
    AS_PG=(runuser -u postgres --)
  fi
  "${AS_PG[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust --encoding=UTF8 --locale=C >"$DIR/postgres-initdb.log" 2>&1 \
    || fail "initdb failed: $(tail -n 20 "$DIR/postgres-initdb.log")"
  # pg_ctl starts the server in a session of its own and waits until it accepts connections.
  # shellcheck disable=SC2086 # CLUSTER_POSTGRES_OPTIONS is a list of server flags
  "${AS_PG[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -t "$START_TIMEOUT" \
    -o "-c listen_addresses=127.0.0.1 -c port=$PG_PORT -c unix_socket_directories=$PG_DIR ${CLUSTER_POSTGRES_OPTIONS:-}" \
    start >"$DIR/postgres-start.log" 2>&1 || fail "PostgreSQL did not start: $(tail -n 30 "$PG_DIR/postgres.log" 2>/dev/null)"
  PG_PID="$(head -n 1 "$PG_DIR/data/postmaster.pid")"
  echo "$PG_PID" >"$DIR/postgres.pid"
  ln -sf "$PG_DIR/postgres.log" "$DIR/postgres.log"
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres \
    -c "CREATE DATABASE agentdir TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'" >/dev/null \
    || fail "could not create the database agentdir"
  DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/agentdir"
  say "postgres: $DATABASE_URL (pid $PG_PID)"
fi
if [ -n "$DATABASE_URL" ]; then DATABASE_ARGS=(--database "$DATABASE_URL"); fi

# ---------------------------------------------------------------------------
# The replicas, all at once (several processes starting together migrate and seed the database once).
# --trust-proxy 1: the client IP is the address nginx appended to X-Forwarded-For, never an entry the
# client sent itself. The replicas listen on 127.0.0.1 only, so nothing but nginx can reach them.
SERVE_URLS=()
cd "$ROOT"
if [ "$SERVE_FROM" = build ]; then
  # Once, before the replicas start: the API and the console's web build, as `npm run serve` makes them.
  node scripts/ensure-build.mjs web api || fail "the build failed (node scripts/ensure-build.mjs web api)"
fi
for i in "${!SERVE_PORTS[@]}"; do
  n=$((i + 1))
  port="${SERVE_PORTS[$i]}"
  setsid "${SERVE_CMD[@]}" --host 127.0.0.1 --port "$port" --data-dir "$DATA_DIR" "${DATABASE_ARGS[@]}" \
    --redis-url "$REDIS_URL" --trust-proxy 1 --public-url "http://127.0.0.1:$PORT" "${SERVE_ARGS[@]}" \
    >"$DIR/serve-$n.log" 2>&1 &
  pid=$!
  SERVE_PIDS+=("$pid")
  SERVE_URLS+=("http://127.0.0.1:$port")
  echo "$pid" >"$DIR/serve-$n.pid"
done
for i in "${!SERVE_PORTS[@]}"; do
  n=$((i + 1))
  wait_until "serve $n" "${SERVE_PIDS[$i]}" "$DIR/serve-$n.log" grep -q 'Agent Directory API:' "$DIR/serve-$n.log"
  say "serve $n: ${SERVE_URLS[$i]} (pid ${SERVE_PIDS[$i]})"
done

# ---------------------------------------------------------------------------
# nginx: its own prefix and config under DIR, in the foreground (no system config, no port 80).
NGINX_DIR="$DIR/nginx"
mkdir -p "$NGINX_DIR/tmp"
USER_LINE=""
if [ "$(id -u)" = 0 ]; then
  # As root, nginx runs its workers as another user: nobody, when it can reach the temp dirs below,
  # else root (a CLUSTER_DIR inside a private home directory, say).
  chmod 0711 "$DIR"
  chmod 0755 "$NGINX_DIR"
  if runuser -u nobody -- test -x "$NGINX_DIR" 2>/dev/null; then
    USER_LINE="user nobody $(id -gn nobody);"
  else
    USER_LINE="user root;"
  fi
fi
UPSTREAMS=""
for port in "${SERVE_PORTS[@]}"; do
  # A replica that refuses a connection is skipped for 2 s, then tried again.
  UPSTREAMS+="    server 127.0.0.1:$port max_fails=1 fail_timeout=2s;"$'\n'
done
cat >"$NGINX_DIR/nginx.conf" <<EOF
# Written by scripts/cluster.sh; nginx -p $NGINX_DIR -c nginx.conf
$USER_LINE
daemon off;
worker_processes 1;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/error.log warn;

events {
    worker_connections 1024;
}

http {
    # Which replica answered each request, and the X-Forwarded-For it was sent.
    log_format cluster '\$remote_addr "\$request" \$status upstream=\$upstream_addr '
                       'upstream_status=\$upstream_status xff="\$proxy_add_x_forwarded_for" \$request_time';
    access_log $NGINX_DIR/access.log cluster;

    client_body_temp_path $NGINX_DIR/tmp/client_body;
    proxy_temp_path $NGINX_DIR/tmp/proxy;
    fastcgi_temp_path $NGINX_DIR/tmp/fastcgi;
    uwsgi_temp_path $NGINX_DIR/tmp/uwsgi;
    scgi_temp_path $NGINX_DIR/tmp/scgi;

    upstream agentdir {
$UPSTREAMS
        # Idle connections kept open to the replicas (they keep theirs longer than nginx's 60 s).
        keepalive 32;
    }

    server {
        listen 127.0.0.1:$PORT;
        client_max_body_size 16m;

        location / {
            proxy_pass http://agentdir;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$http_host;
            # The client's own X-Forwarded-For (if any) with the address nginx sees appended:
            # the replicas (--trust-proxy 1) take that last entry as the client.
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto \$scheme;
            # On a refused or broken connection, the next replica. A request that may already have
            # reached a replica is passed on only when it is idempotent (nginx never resends a POST).
            proxy_next_upstream error timeout;
            proxy_next_upstream_tries 2;
            proxy_connect_timeout 2s;
            proxy_read_timeout 60s;
        }
    }
}
EOF
nginx -t -p "$NGINX_DIR" -c nginx.conf -e "$NGINX_DIR/error.log" >"$NGINX_DIR/config-test.log" 2>&1 \
  || fail "nginx rejected its config: $(cat "$NGINX_DIR/config-test.log")"
setsid nginx -p "$NGINX_DIR" -c nginx.conf -e "$NGINX_DIR/error.log" >"$NGINX_DIR/stdout.log" 2>&1 &
NGINX_PID=$!
wait_until nginx "$NGINX_PID" "$NGINX_DIR/error.log" curl -fsS -o /dev/null "http://127.0.0.1:$PORT/api/v1/health"
say "nginx: http://127.0.0.1:$PORT (pid $NGINX_PID) -> ${SERVE_URLS[*]}"

# ---------------------------------------------------------------------------
{
  echo "CLUSTER_URL=http://127.0.0.1:$PORT"
  echo "CLUSTER_API=http://127.0.0.1:$PORT/api/v1"
  echo "CLUSTER_SERVE_URLS=\"${SERVE_URLS[*]}\""
  echo "CLUSTER_SERVE_PIDS=\"${SERVE_PIDS[*]}\""
  echo "CLUSTER_NGINX_PID=$NGINX_PID"
  echo "CLUSTER_REDIS_URL=$REDIS_URL"
  echo "CLUSTER_REDIS_PID=$REDIS_PID"
  if [ -n "$PG_PID" ]; then
    echo "CLUSTER_DATABASE_URL=$DATABASE_URL"
    echo "CLUSTER_POSTGRES_PID=$PG_PID"
  fi
  echo "CLUSTER_DATA_DIR=$DATA_DIR"
} >"$DIR/cluster.env"
# Where the admin token is, never the token itself (it would land in terminals and logs).
TOKEN_AT="$DATA_DIR/admin-token"
if [ -n "${AGENTDIR_ADMIN_TOKEN:-}" ]; then TOKEN_AT="AGENTDIR_ADMIN_TOKEN"; fi
say "api http://127.0.0.1:$PORT/api/v1 (admin token: $TOKEN_AT)"
say "ready (Ctrl-C stops everything; logs and pids in $DIR)"

# Until a signal comes (or everything has exited). A replica that dies is not restarted: nginx
# passes its share to the others.
wait
