#!/usr/bin/env bash
# check-image.sh proves that an image built from deploy/Dockerfile works,
# before it is rolled out:
#
#   deploy/check-image.sh [IMAGE]        # default IMAGE: outbound
#
# It starts the image's own CMD (`console serve` on a SQLite database) in a
# container with no network at all (--network none: nothing it does can
# leave the machine, and no host port is taken), then checks, inside it:
#   - the process runs as the image's user, not root;
#   - /healthz answers 200 and Docker's HEALTHCHECK reports healthy;
#   - `console doctor` passes every check, the browser launch included, with
#     no browser variable set (Chromium, node and the driver are found where
#     the console looks by itself);
#   - take_screenshot of a page served inside the container (the console's
#     own sign-in page, allowed as an internal host) writes a PNG;
#   - the guard still refuses what is not allowed (exit 3).
# Exit 0 when all pass; the container is removed either way.
set -euo pipefail

image=${1:-outbound}
name=outbound-check-$$
out=$(mktemp -d)
trap 'docker rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$out"' EXIT

step() { printf '== %s\n' "$*"; }
fail() { printf 'check-image: FAIL: %s\n' "$*" >&2; docker logs "$name" 2>&1 | tail -20 >&2 || true; exit 1; }
inside() { docker exec "$name" "$@"; }

step "image $image: $(docker image inspect -f '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1 / 1e6 }')"
docker run -d --name "$name" --network none "$image" >/dev/null

step "serve comes up: /healthz answers 200"
healthz='fetch("http://127.0.0.1:8080/healthz").then(async r => { console.log(r.status, await r.text()); process.exit(r.ok ? 0 : 1) }, e => { console.log(String(e)); process.exit(1) })'
for i in $(seq 60); do
	if body=$(inside node -e "$healthz" 2>/dev/null); then
		echo "$body"
		break
	fi
	[[ $(docker inspect -f '{{.State.Running}}' "$name") == true ]] || fail "the container stopped"
	((i < 60)) || fail "/healthz did not answer 200 in 60 s: $body"
	sleep 1
done

step "not root"
user=$(docker image inspect -f '{{.Config.User}}' "$image")
# PID 1 is the console itself (CMD in exec form); its real uid:
uid=$(inside grep '^Uid:' /proc/1/status | awk '{ print $2 }')
echo "image USER=$user; the console (PID 1) runs as uid $uid; docker exec as $(inside id -un)"
[[ -n $uid && $uid != 0 ]] || fail "the console runs as root (uid '$uid')"

step "console version"
inside console version

step "console doctor (no browser variables set)"
if inside env | grep -E '^(OUTBOUND_CHROMIUM|OUTBOUND_CACHE|PLAYWRIGHT_[A-Z_]*)='; then
	fail "the image sets a browser variable; the console must find the browser without one"
fi
inside console doctor || fail "console doctor reported a broken piece"

step "take_screenshot of a page served inside the container"
inside console allow add --internal 127.0.0.1:8080 --note "check-image: the console's own page" >/dev/null
inside console tool --out /tmp/shot.png take_screenshot '{"url": "http://127.0.0.1:8080/"}'
docker cp "$name:/tmp/shot.png" "$out/shot.png" >/dev/null
magic=$(head -c 8 "$out/shot.png" | od -An -tx1 | tr -d ' \n')
[[ $magic == 89504e470d0a1a0a ]] || fail "the screenshot is not a PNG (starts $magic)"
echo "PNG of $(wc -c <"$out/shot.png") bytes"
[[ -z ${KEEP_SCREENSHOT:-} ]] || cp "$out/shot.png" "$KEEP_SCREENSHOT"

step "the guard refuses what is not allowed"
set +e
inside console check http://169.254.169.254/latest/meta-data/
code=$?
set -e
((code == 3)) || fail "console check of the metadata address exited $code, not 3 (refused)"

step "HEALTHCHECK reports healthy"
for i in $(seq 90); do
	status=$(docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "$name")
	case $status in
	healthy) echo "$status"; break ;;
	none) fail "the image has no HEALTHCHECK" ;;
	unhealthy) fail "HEALTHCHECK says unhealthy: $(docker inspect -f '{{json .State.Health.Log}}' "$name")" ;;
	esac
	((i < 90)) || fail "HEALTHCHECK still $status after 90 s"
	sleep 1
done

echo "check-image: all checks passed for $image"
