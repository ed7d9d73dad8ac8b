#!/bin/sh
# Builds the ferrokraft tarball: bin/ferrokraft, Kafka-compatible bin/kafka-server-start.sh and
# bin/kafka-server-stop.sh, config/controller.properties, systemd/ferrokraft.service.
#   dist/make-tarball.sh [BINARY [OUT_DIR]]   (defaults: target/release/ferrokraft, target/dist)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
binary=${1:-$here/../target/release/ferrokraft}
out=${2:-$here/../target/dist}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$here/../Cargo.toml" | head -n 1)
name=ferrokraft-$version
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/bin" "$stage/$name/config" "$stage/$name/systemd" "$out"
cp "$binary" "$stage/$name/bin/ferrokraft"
cp "$here/bin/kafka-server-start.sh" "$here/bin/kafka-server-stop.sh" "$stage/$name/bin/"
cp "$here/config/controller.properties" "$stage/$name/config/"
cp "$here/systemd/ferrokraft.service" "$stage/$name/systemd/"
cp "$here/../LICENSE" "$stage/$name/"
chmod 755 "$stage/$name/bin/"*
tar -C "$stage" -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
