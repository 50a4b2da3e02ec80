#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the test suite, so the store tests run
# against PostgreSQL as well as SQLite on any Debian machine.
#
#   bash scripts/pg-test-cluster.sh start DIR   # prints the DSN on stdout
#   bash scripts/pg-test-cluster.sh stop DIR
#
# scripts/test.sh starts one before the tests and stops it at the end. The
# cluster lives in DIR (a temporary directory), runs as the postgres user
# (PostgreSQL refuses to run as root), listens only on a unix socket in DIR
# (no TCP port, so two runs never collide and nothing off the machine can
# reach it) and trusts local connections: it holds nothing but test data and
# dies with the run.
set -euo pipefail

say() { printf '==> %s\n' "$*" >&2; }
fail() { printf 'pg-test-cluster.sh: %s\n' "$*" >&2; exit 1; }

# pg_bin finds Debian's PostgreSQL binaries (the newest installed major).
pg_bin() {
	local dir
	dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
	[[ -n "$dir" && -x "$dir/initdb" ]] || return 1
	printf '%s\n' "$dir"
}

install_postgres() {
	if pg_bin >/dev/null; then
		return
	fi
	[[ $(id -u) -eq 0 ]] || fail "PostgreSQL is not installed; install it as root: apt-get update && apt-get install -y postgresql"
	say "apt: installing postgresql"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# The package's own cluster (main, port 5432) is not used; the
	# throwaway cluster below is.
	apt-get install -y -qq postgresql >&2
	pg_bin >/dev/null || fail "apt installed postgresql but no /usr/lib/postgresql/*/bin/initdb was found"
}

# as_owner runs a command as the cluster's owner: postgres when we are
# root, ourselves otherwise.
as_owner() {
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

start() {
	local dir="$1" bin
	install_postgres
	bin="$(pg_bin)"
	mkdir -p "$dir"
	if [[ $(id -u) -eq 0 ]]; then
		chown postgres: "$dir"
		# The owner must reach DIR through its parents (mktemp makes 0700).
		chmod 0755 "$dir"
	fi
	say "postgres: initdb in $dir/data"
	as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null ||
		fail "initdb failed in $dir/data"
	# fsync off: the cluster is thrown away, and the tests should measure the
	# code, not the disk. PG_TEST_DURABLE=1 keeps PostgreSQL's own
	# durability (fsync, synchronous commit, full-page writes) for load
	# figures that stand for a real deployment.
	local durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	if [[ ${PG_TEST_DURABLE:-} == 1 ]]; then
		durability=""
	fi
	as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
		-o "-c listen_addresses='' -c unix_socket_directories='$dir' $durability -c max_connections=300" \
		start >/dev/null || { cat "$dir/postgres.log" >&2; fail "the test cluster did not start (log above)"; }
	as_owner "$bin/createdb" -h "$dir" -U postgres outbound_test ||
		fail "cannot create the database outbound_test"
	# pg_trgm in public, before any test: an extension lives in the schema
	# it was first created in, and a test's schema is dropped when the test
	# ends, taking the extension and every other schema's trigram indexes
	# with it (internal/pgtest does the same for a cluster of your own).
	as_owner "$bin/psql" -h "$dir" -U postgres -d outbound_test -qc "CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public" >&2 ||
		fail "cannot create the extension pg_trgm (Debian's postgresql package ships it)"
	# The socket directory goes in the host parameter.
	printf 'postgres://postgres@/outbound_test?host=%s&sslmode=disable\n' "$dir"
}

stop() {
	local dir="$1" bin
	bin="$(pg_bin)" || return 0
	if [[ -f "$dir/data/postmaster.pid" ]]; then
		as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null || true
	fi
	rm -rf "$dir"
}

case "${1:-}" in
start) start "${2:?usage: pg-test-cluster.sh start DIR}" ;;
stop) stop "${2:?usage: pg-test-cluster.sh stop DIR}" ;;
*) fail "usage: pg-test-cluster.sh start|stop DIR" ;;
esac
