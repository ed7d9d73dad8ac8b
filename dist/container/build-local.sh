#!/bin/sh
# Builds ferrokraft's runtime image from a binary built on this machine, with no base image
# to pull: rootfs.sh lays out the file system, then `podman build` (or $CONTAINER_ENGINE)
# runs Containerfile.local on it.
#   dist/container/build-local.sh [BINARY [TAG]]   (defaults: target/release/ferrokraft, ferrokraft:latest)
# Extra options for the engine (e.g. --root/--storage-driver) go in $ENGINE_OPTS.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
binary=${1:-$here/../../target/release/ferrokraft}
tag=${2:-ferrokraft:latest}
engine=${CONTAINER_ENGINE:-podman}
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
sh "$here/rootfs.sh" "$binary" "$context/rootfs"
cp "$here/Containerfile.local" "$context/Containerfile"
# shellcheck disable=SC2086
$engine ${ENGINE_OPTS:-} build -q -t "$tag" -f "$context/Containerfile" "$context"
