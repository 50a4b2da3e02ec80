#!/usr/bin/env bash
# The one test command (README and CI both use it): installs what the tests
# need, then runs every check and every test.
#
#   bash scripts/test.sh              # everything
#   bash scripts/test.sh -run Smoke   # extra arguments go to `go test`
#
# Why it installs things itself: CI is a fresh Debian 12 machine that reaches
# only Debian apt, the npm registry and the Go module proxy. Playwright's own
# driver and browser downloads come from a CDN and cannot work there, so the
# browser is Debian's chromium and the Playwright driver is npm's
# playwright-core at the version playwright-go v0.5200.1 speaks.
#
# Every install step checks first, so a second run only runs the checks.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

# Must match playwright-go's playwrightCliVersion (go.mod pins v0.5200.1).
readonly playwright_core_version="1.52.0"
# chromium: the browser. fonts-dejavu-core: glyphs for screenshots.
# iproute2, util-linux: ip and unshare, for tests in a private network
# namespace. gcc, libc6-dev: cgo, which -race and the SQLite driver need.
# postgresql: the second store; the tests run a throwaway cluster of it.
readonly apt_packages=(chromium fonts-dejavu-core iproute2 util-linux gcc libc6-dev postgresql)

started=$SECONDS
step_name="setup"
failed_checks=()

say() { printf '==> %s\n' "$*" >&2; }
fail() { printf 'test.sh: %s\n' "$*" >&2; exit 1; }

step() {
	step_name="$1"
	say "$1"
}

# check runs one check to its end even when an earlier one failed, so a
# single run reports every problem: "check NAME COMMAND ARGS...".
check() {
	local name="$1" rc
	shift
	step "$name"
	# set -e does not apply inside a function called from an if or ||, so
	# the check runs in a subshell with set -e, outside any condition.
	set +e
	(
		set -e
		"$@"
	)
	rc=$?
	set -e
	if [[ $rc -ne 0 ]]; then
		failed_checks+=("$name")
		say "FAILED: $name"
	fi
}

# summary reports the script's exit status: $?, or the status given.
summary() {
	local rc=${1:-$?}
	local took=$((SECONDS - started))
	if [[ $rc -eq 0 ]]; then
		printf 'test.sh: PASS: installs, gofmt, go vet, templ, go test -race on SQLite and PostgreSQL (%ss)\n' "$took" >&2
	elif [[ ${#failed_checks[@]} -gt 0 ]]; then
		local list
		printf -v list '%s; ' "${failed_checks[@]}"
		printf 'test.sh: FAIL: %s (%ss)\n' "${list%; }" "$took" >&2
	else
		printf 'test.sh: FAIL in step "%s" (exit %s, %ss)\n' "$step_name" "$rc" "$took" >&2
	fi
}
trap summary EXIT

# missing_apt_packages prints the packages of apt_packages that dpkg does not
# list as installed, one a line.
missing_apt_packages() {
	local pkg
	for pkg in "${apt_packages[@]}"; do
		if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
			printf '%s\n' "$pkg"
		fi
	done
}

install_apt_packages() {
	step "apt: checking ${apt_packages[*]}"
	if ! command -v dpkg-query >/dev/null; then
		fail "no dpkg-query: this script installs with apt on Debian 12; on another system install ${apt_packages[*]} yourself and set OUTBOUND_CHROMIUM to the chromium binary"
	fi
	local missing
	mapfile -t missing < <(missing_apt_packages)
	if [[ ${#missing[@]} -eq 0 ]]; then
		return
	fi
	if [[ $(id -u) -ne 0 ]]; then
		fail "missing packages: ${missing[*]}; install them as root: apt-get update && apt-get install -y ${missing[*]}"
	fi
	say "apt: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}"
}

# install_playwright_driver installs playwright-core into the cache and lays
# out the folder playwright-go expects: <driver>/package/cli.js.
install_playwright_driver() {
	step "npm: checking playwright-core@$playwright_core_version"
	command -v node >/dev/null || fail "node is not installed: install Node.js 20 (and npm)"
	command -v npm >/dev/null || fail "npm is not installed: install npm alongside Node.js 20"

	local cache="${OUTBOUND_CACHE:-$repo/.cache}/playwright"
	local core="$cache/node_modules/playwright-core"
	local have=""
	if [[ -f "$core/package.json" ]]; then
		have="$(node -p 'require(process.argv[1]).version' "$core/package.json")"
	fi
	if [[ "$have" != "$playwright_core_version" ]]; then
		say "npm: installing playwright-core@$playwright_core_version into $cache (found: ${have:-none})"
		mkdir -p "$cache"
		# playwright-core has no browser download of its own; the variable makes
		# sure a future version cannot start one either.
		PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install "playwright-core@$playwright_core_version" \
			--no-save --no-audit --no-fund --prefix "$cache" >&2
	fi

	local driver="$cache/driver"
	mkdir -p "$driver"
	# Relative, so the cache folder can be moved or mounted elsewhere.
	ln -sfn ../node_modules/playwright-core "$driver/package"
	# playwright-go runs <driver>/node unless told otherwise.
	ln -sfn "$(command -v node)" "$driver/node"

	# No PLAYWRIGHT_* variable is exported: the product finds the driver in
	# .cache/playwright by itself, and the tests prove it. A missing browser
	# fails the browser tests here instead of skipping them.
	export OUTBOUND_BROWSER_REQUIRED=1
	export OUTBOUND_CHROMIUM="${OUTBOUND_CHROMIUM:-/usr/bin/chromium}"

	# Fail here, with the reason, rather than deep inside a browser test.
	local version
	version="$(node "$driver/package/cli.js" --version)" ||
		fail "the Playwright driver in $driver does not run: delete $cache and run this script again"
	[[ "$version" == *"$playwright_core_version"* ]] ||
		fail "the Playwright driver in $driver reports \"$version\", want $playwright_core_version: delete $cache and run this script again"
	[[ -x "$OUTBOUND_CHROMIUM" ]] ||
		fail "no chromium at $OUTBOUND_CHROMIUM: apt-get install chromium, or set OUTBOUND_CHROMIUM to a Chromium binary"
}

check_gofmt() {
	local files=() unformatted
	mapfile -d '' -t files < <(git ls-files -z -- '*.go')
	if [[ ${#files[@]} -eq 0 ]]; then
		return
	fi
	unformatted="$(gofmt -l "${files[@]}")"
	if [[ -n "$unformatted" ]]; then
		printf '%s\n' "$unformatted" >&2
		fail "these files are not gofmt-formatted: run gofmt -w on them"
	fi
}

check_vet() {
	go vet ./...
}

# templ_outputs_state prints a fingerprint of every generated view file:
# status, uncommitted diff and the contents of untracked ones. Comparing it
# before and after generate flags exactly what generate changed, even in a
# working checkout with edits of its own; on a clean clone that is the same as
# "git status shows a change".
templ_outputs_state() {
	{
		git status --porcelain -- '*_templ.go'
		git diff --no-ext-diff -- '*_templ.go'
		git ls-files -z -o --exclude-standard -- '*_templ.go' | xargs -0r sha256sum
	} | sha256sum
}

# check_templ regenerates the views and fails when that changes a generated
# file, so what is committed is what the .templ sources say.
check_templ() {
	local sources=(views/*.templ)
	if [[ ! -e "${sources[0]}" ]]; then
		say "templ: no views/*.templ, nothing to check"
		return
	fi
	local before after
	before="$(templ_outputs_state)"
	go tool templ generate >&2
	after="$(templ_outputs_state)"
	if [[ "$before" != "$after" ]]; then
		git status --porcelain -- '*_templ.go' >&2
		fail "templ generate changed the files above: commit the regenerated *_templ.go files"
	fi
}

run_tests() {
	go test -race -count=1 -timeout 20m "$@" ./...
}

# run_without_race runs the tests the race detector skips: playwright-go
# v0.5200.1 races inside itself (requestImpl.safePage against newPage) when
# a new window's first request is routed before the driver has built the
# window's page, which the hidden-orders test provokes on purpose.
run_without_race() {
	go test -count=1 -timeout 10m -run 'TestBrowserHiddenOrders' ./tools/
}

# start_postgres starts the throwaway PostgreSQL cluster the store tests
# also run against (scripts/pg-test-cluster.sh installs Debian's postgresql
# when it is missing) and stops it when the script exits. The tests find it
# in OUTBOUND_TEST_POSTGRES; OUTBOUND_POSTGRES_REQUIRED makes a missing one
# a failure rather than a skip, as OUTBOUND_BROWSER_REQUIRED does for the
# browser.
pg_dir=""
start_postgres() {
	step "postgres: starting a throwaway cluster"
	pg_dir="$(mktemp -d "${TMPDIR:-/tmp}/outbound-pg.XXXXXX")"
	local dsn
	dsn="$(bash "$repo/scripts/pg-test-cluster.sh" start "$pg_dir")" ||
		fail "the PostgreSQL test cluster did not start (see above); on a system without apt, set OUTBOUND_TEST_POSTGRES to a database URL the tests may create schemas in"
	export OUTBOUND_TEST_POSTGRES="$dsn"
	export OUTBOUND_POSTGRES_REQUIRED=1
}

stop_postgres() {
	if [[ -n "$pg_dir" ]]; then
		bash "$repo/scripts/pg-test-cluster.sh" stop "$pg_dir" || true
	fi
}

install_apt_packages
install_playwright_driver
if [[ -n "${OUTBOUND_TEST_POSTGRES:-}" ]]; then
	# A database given from outside is used as it is.
	export OUTBOUND_POSTGRES_REQUIRED=1
else
	# The exit status of the script, not of stop_postgres, is what summary reports.
	trap 'st=$?; stop_postgres; summary "$st"' EXIT
	start_postgres
fi
check "gofmt -l (tracked Go files)" check_gofmt
check "go vet ./..." check_vet
check "templ generate (must leave *_templ.go unchanged)" check_templ
check "go test -race -count=1 -timeout 20m${*:+ $*} ./..." run_tests "$@"
if [[ $# -eq 0 ]]; then
	check "go test (without -race) -run TestBrowserHiddenOrders ./tools/" run_without_race
fi
[[ ${#failed_checks[@]} -eq 0 ]]
