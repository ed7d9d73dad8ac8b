#!/bin/sh
# Regenerates src/controller/configs/broker_static_table.rs from a Kafka release's jars:
#   tools/dev/broker-configs/gen.sh [KAFKA_LIB_DIR]   (default: interop/.kafka/4.1.2/lib)
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
lib=${1:-$root/interop/.kafka/4.1.2/lib}
out=$root/src/controller/configs/broker_static_table.rs
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
javac -d "$build" -cp "$lib/*" "$root/tools/dev/broker-configs/BrokerConfigFacts.java"
java -cp "$build:$lib/*" BrokerConfigFacts > "$out.tmp"
mv "$out.tmp" "$out"
rustfmt --edition 2021 "$out"
echo "wrote $out ($(grep -c 'StaticKey {' "$out") keys)"
