#!/usr/bin/env bash
# local-base-images.sh builds the two base images deploy/Dockerfile starts
# from, debian:12-slim and golang:1.26-bookworm, out of Debian's mirror and
# this machine's Go toolchain, for a Docker engine that cannot pull from
# Docker Hub (a machine that reaches only Debian's mirror, npm and the Go
# module proxy, as Outbound's own do).
#
#   sudo deploy/local-base-images.sh [WORKDIR]      # default WORKDIR: /tmp/outbound-base
#   docker build --network host -f deploy/Dockerfile -t outbound .
#
# What it does:
#   - debootstrap --variant=minbase bookworm into WORKDIR/rootfs (kept, so a
#     second run skips it), trims it and configures dpkg and apt to leave no
#     docs, translations or .deb files, as Debian's slim image does, and
#     imports it as debian:12-slim;
#   - builds golang:1.26-bookworm on it: gcc and libc6-dev for cgo (the
#     SQLite driver), git, and the Go toolchain at $(go env GOROOT), which
#     must be at least go.mod's go line.
# CA certificates this machine added to its trust (the *.crt files in
# /usr/local/share/ca-certificates, e.g. a TLS-inspecting proxy's) are put
# into both images and NODE_EXTRA_CA_CERTS points npm at them, so the build
# fetches through the same proxy. An image built on them trusts those CAs
# too: ship images built on bases without them. Needs root, debootstrap,
# docker and go.
set -euo pipefail

work=${1:-/tmp/outbound-base}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
repo=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "local-base-images: $*" >&2; exit 1; }
for cmd in debootstrap docker go; do
	command -v "$cmd" >/dev/null || die "$cmd is not installed (apt-get install debootstrap docker.io; Go from go.dev or your package manager)"
done
[[ $(id -u) == 0 ]] || die "debootstrap needs root: run it with sudo"

goroot=$(go env GOROOT)
need=$(awk '$1 == "go" { print $2; exit }' "$repo/go.mod")
have=$(go env GOVERSION)
# sort -V orders go1.26.0 before go1.26.8: the toolchain must not sort first.
[[ $(printf '%s\n' "go$need" "$have" | sort -V | head -1) == "go$need" ]] ||
	die "the Go toolchain at $goroot is $have; go.mod needs go$need or later"

mkdir -p "$work"
rootfs=$work/rootfs
if [[ ! -x $rootfs/bin/sh ]]; then
	echo "local-base-images: debootstrap bookworm from $mirror into $rootfs (a few minutes)"
	debootstrap --variant=minbase bookworm "$rootfs" "$mirror"
fi

# The slim image's apt sources: the release, its updates and security.
rm -f "$rootfs/etc/apt/sources.list"
cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
# As Debian's official slim image does: packages installed later leave no
# docs, manuals or translations (copyright files stay), and apt keeps no
# downloaded .deb files.
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
path-exclude /usr/share/lintian/*
EOF
cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
	"$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/*
: >"$rootfs/etc/resolv.conf"
rm -f "$rootfs/etc/hostname"

extra_ca=()
shopt -s nullglob
for crt in /usr/local/share/ca-certificates/*.crt; do extra_ca+=("$crt"); done
shopt -u nullglob
mkdir -p "$rootfs/usr/local/share/ca-certificates"
rm -f "$rootfs"/usr/local/share/ca-certificates/*.crt
changes=()
if ((${#extra_ca[@]})); then
	echo "local-base-images: adding this machine's CA certificates: ${extra_ca[*]}"
	cp "${extra_ca[@]}" "$rootfs/usr/local/share/ca-certificates/"
	changes=(--change "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt")
fi
tar -C "$rootfs" -c . | docker import "${changes[@]}" --change 'CMD ["bash"]' - debian:12-slim

golang=$work/golang
rm -rf "$golang" && mkdir -p "$golang"
cp -a "$goroot" "$golang/go"
cat >"$golang/Dockerfile" <<'EOF'
FROM debian:12-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates gcc libc6-dev git make pkg-config \
 && rm -rf /var/lib/apt/lists/*
COPY go /usr/local/go
ENV GOPATH=/go PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOTOOLCHAIN=local
WORKDIR /go
EOF
docker build --network host -t golang:1.26-bookworm "$golang"
rm -rf "$golang"
docker image ls debian:12-slim
docker image ls golang:1.26-bookworm
